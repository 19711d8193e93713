//! node_exporter's xfs collector: /sys/fs/xfs.

use super::*;

/// node_exporter's XFS families: `(line of stats, column, name after
/// node_xfs_, help)`, all counters.
const XFS: &[(&str, usize, &str, &str)] = &[
    (
        "extent_alloc",
        0,
        "extent_allocation_extents_allocated",
        "Number of extents allocated for a filesystem.",
    ),
    (
        "extent_alloc",
        1,
        "extent_allocation_blocks_allocated",
        "Number of blocks allocated for a filesystem.",
    ),
    (
        "extent_alloc",
        2,
        "extent_allocation_extents_freed",
        "Number of extents freed for a filesystem.",
    ),
    (
        "extent_alloc",
        3,
        "extent_allocation_blocks_freed",
        "Number of blocks freed for a filesystem.",
    ),
    (
        "abt",
        0,
        "allocation_btree_lookups",
        "Number of allocation B-tree lookups for a filesystem.",
    ),
    (
        "abt",
        1,
        "allocation_btree_compares",
        "Number of allocation B-tree compares for a filesystem.",
    ),
    (
        "abt",
        2,
        "allocation_btree_records_inserted",
        "Number of allocation B-tree records inserted for a filesystem.",
    ),
    (
        "abt",
        3,
        "allocation_btree_records_deleted",
        "Number of allocation B-tree records deleted for a filesystem.",
    ),
    (
        "blk_map",
        0,
        "block_mapping_reads",
        "Number of block map for read operations for a filesystem.",
    ),
    (
        "blk_map",
        1,
        "block_mapping_writes",
        "Number of block map for write operations for a filesystem.",
    ),
    (
        "blk_map",
        2,
        "block_mapping_unmaps",
        "Number of block unmaps (deletes) for a filesystem.",
    ),
    (
        "blk_map",
        3,
        "block_mapping_extent_list_insertions",
        "Number of extent list insertions for a filesystem.",
    ),
    (
        "blk_map",
        4,
        "block_mapping_extent_list_deletions",
        "Number of extent list deletions for a filesystem.",
    ),
    (
        "blk_map",
        5,
        "block_mapping_extent_list_lookups",
        "Number of extent list lookups for a filesystem.",
    ),
    (
        "blk_map",
        6,
        "block_mapping_extent_list_compares",
        "Number of extent list compares for a filesystem.",
    ),
    (
        "bmbt",
        0,
        "block_map_btree_lookups",
        "Number of block map B-tree lookups for a filesystem.",
    ),
    (
        "bmbt",
        1,
        "block_map_btree_compares",
        "Number of block map B-tree compares for a filesystem.",
    ),
    (
        "bmbt",
        2,
        "block_map_btree_records_inserted",
        "Number of block map B-tree records inserted for a filesystem.",
    ),
    (
        "bmbt",
        3,
        "block_map_btree_records_deleted",
        "Number of block map B-tree records deleted for a filesystem.",
    ),
    (
        "dir",
        0,
        "directory_operation_lookup",
        "Number of file name directory lookups which miss the operating systems directory name lookup cache.",
    ),
    (
        "dir",
        1,
        "directory_operation_create",
        "Number of times a new directory entry was created for a filesystem.",
    ),
    (
        "dir",
        2,
        "directory_operation_remove",
        "Number of times an existing directory entry was created for a filesystem.",
    ),
    (
        "dir",
        3,
        "directory_operation_getdents",
        "Number of times the directory getdents operation was performed for a filesystem.",
    ),
    (
        "rw",
        0,
        "write_calls",
        "Number of write(2) system calls made to files in a filesystem.",
    ),
    (
        "rw",
        1,
        "read_calls",
        "Number of read(2) system calls made to files in a filesystem.",
    ),
    (
        "ig",
        0,
        "inode_operation_attempts",
        "Number of times the OS looked for an XFS inode in the inode cache.",
    ),
    (
        "ig",
        1,
        "inode_operation_found",
        "Number of times the OS looked for and found an XFS inode in the inode cache.",
    ),
    (
        "ig",
        2,
        "inode_operation_recycled",
        "Number of times the OS found an XFS inode in the cache, but could not use it as it was being recycled.",
    ),
    (
        "ig",
        3,
        "inode_operation_missed",
        "Number of times the OS looked for an XFS inode in the cache, but did not find it.",
    ),
    (
        "ig",
        4,
        "inode_operation_duplicates",
        "Number of times the OS tried to add a missing XFS inode to the inode cache, but found it had already been added by another process.",
    ),
    (
        "ig",
        5,
        "inode_operation_reclaims",
        "Number of times the OS reclaimed an XFS inode from the inode cache to free memory for another purpose.",
    ),
    (
        "ig",
        6,
        "inode_operation_attribute_changes",
        "Number of times the OS explicitly changed the attributes of an XFS inode.",
    ),
    (
        "vnodes",
        0,
        "vnode_active",
        "Number of vnodes not on free lists for a filesystem.",
    ),
    (
        "vnodes",
        1,
        "vnode_allocate",
        "Number of times vn_alloc called for a filesystem.",
    ),
    (
        "vnodes",
        2,
        "vnode_get",
        "Number of times vn_get called for a filesystem.",
    ),
    (
        "vnodes",
        3,
        "vnode_hold",
        "Number of times vn_hold called for a filesystem.",
    ),
    (
        "vnodes",
        4,
        "vnode_release",
        "Number of times vn_rele called for a filesystem.",
    ),
    (
        "vnodes",
        5,
        "vnode_reclaim",
        "Number of times vn_reclaim called for a filesystem.",
    ),
    (
        "vnodes",
        6,
        "vnode_remove",
        "Number of times vn_remove called for a filesystem.",
    ),
];

/// Per mounted filesystem: the columns of `stats/stats` node_exporter names.
pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    match class(x, Source::Xfs) {
        Some(d) => xfs(out, d),
        None => Ok(()),
    }
}

fn xfs(out: &mut Out<'_>, filesystems: &[ClassDevice]) -> Fmt {
    let mut name = String::new();
    let mut key = String::new();
    for (line, column, suffix, help) in XFS {
        key.clear();
        key.push_str("stats/stats:");
        key.push_str(line);
        let rows: Vec<_> = filesystems
            .iter()
            .filter_map(|f| {
                let v = f.get(&key)?.split_whitespace().nth(*column)?;
                Some((f.name.as_str(), parse_uint(v)?))
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        NODE_XFS_TOTAL.instance_into(suffix, &mut name);
        let mut m = out.family_named(&NODE_XFS_TOTAL, &name, help)?;
        for (device, v) in rows {
            counter_l(&mut m, &[("device", device)], v as f64)?;
        }
    }
    Ok(())
}
