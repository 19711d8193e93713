//! The walk down each hierarchy: a node read, its children listed again
//! when inotify says they changed, new ones found, removed ones let go.

use super::*;

impl Reader {
    /// Reads node `i` in hierarchy `hi` (its directory `dir`), then its
    /// children.
    pub(super) fn visit(&mut self, hi: usize, i: Ix, mut dir: Dir, out: &mut Sample) {
        let rows = Self::rows_of(&self.walk, self.walked_hier, hi);
        let h = &mut self.hiers[hi];
        let (v2, root) = (h.info.v2, h.root_fd());
        let node = &mut self.nodes[i as usize];
        // Found in v1 first, in v2 now (made there later): the v2 inode is
        // its id, as the kernel and the BPF walk number it.
        if v2 && !node.id_v2 {
            if let Ok(fd) = dir.get(root, &node.path) {
                node.id = inode(fd).unwrap_or(node.id);
            }
            node.id_v2 = true;
        }
        let p = node.per.at(hi);
        if p.ino == 0
            && let Ok(fd) = dir.get(root, &node.path)
        {
            p.ino = inode(fd).unwrap_or(0);
        }
        let row = h.find_row(rows, p.ino, p.row);
        if let Some(r) = row {
            p.row = r;
        }
        let depth = node.depth;
        if self.read_files(hi, i, row, &mut dir, out) && self.list_children(hi, i, &mut dir, out) {
            // Below the depth asked for: left out (and forgotten, as gone).
            if depth >= self.opts.max_depth {
                out.left_out += self.nodes[i as usize].per.at(hi).children.len() as u64;
                return self.keep_dir(hi, i, &mut dir);
            }
            let mut children = std::mem::take(&mut self.nodes[i as usize].per.at(hi).children);
            for child in &mut children {
                self.visit_child(hi, i, child, &mut dir, depth, out);
            }
            self.nodes[i as usize].per.at(hi).children = children;
        }
        self.keep_dir(hi, i, &mut dir);
    }

    /// A directory opened for this read is kept within the budget.
    fn keep_dir(&mut self, hi: usize, i: Ix, dir: &mut Dir) {
        if let Some(fd) = dir.held.take() {
            let p = self.nodes[i as usize].per.at(hi);
            if p.dir.is_none() && self.kept < self.opts.max_fds {
                p.dir = Some(fd);
                self.kept += 1;
            }
        }
    }

    /// Visits `child` of node `parent` (its directory `dir`) in hierarchy
    /// `hi`: through its kept directory; not opened at all when the BPF
    /// walk read it (opened from the hierarchy's root only if a file must
    /// be read or its children listed); else opened beneath `dir`.
    pub(super) fn visit_child(
        &mut self,
        hi: usize,
        parent: Ix,
        child: &mut Child,
        dir: &mut Dir,
        depth: u16,
        out: &mut Sample,
    ) {
        let (reads, every) = (self.reads, self.opts.memory_stat_every.max(1));
        let i = self.child_node(child);
        let rows = Self::rows_of(&self.walk, self.walked_hier, hi);
        let h = &mut self.hiers[hi];
        // Walked: what the walk, when it ran, says of a cgroup with an
        // inode. Only a cgroup that needs no descriptor this read is
        // visited without one: the others are opened beneath `dir`, one
        // name looked up, rather than from the root later.
        let (kept, walked) = match i.map(|i| self.nodes[i as usize].per.at(hi)) {
            Some(p) => {
                let walked =
                    (p.ino != 0 && h.walked).then(|| match h.find_row(rows, p.ino, p.row) {
                        Some(r) => {
                            p.row = r;
                            match h.row(rows, r) {
                                Some(row) if !needs_dir(h, p, row, reads, every) => Walked::Whole,
                                _ => Walked::NeedsDir,
                            }
                        }
                        None => Walked::Gone,
                    });
                (p.dir.as_ref().map(|f| f.as_raw_fd()), walked)
            }
            None => (None, None),
        };
        match (i, kept, walked) {
            // Gone from this hierarchy since the BPF walk's last read of
            // it (or made again under its name: found by the next read).
            (_, _, Some(Walked::Gone)) => {}
            (Some(i), Some(fd), _) => self.visit(hi, i, Dir::open(fd), out),
            (Some(i), None, Some(Walked::Whole)) => self.visit(hi, i, Dir::lazy(), out),
            // New past this read's share: taken by a later read.
            (None, _, _) if self.complete > 0 && self.made >= self.opts.max_new_per_read => {
                out.left_out += 1;
            }
            (_, _, _) => {
                let root = h.root_fd();
                let parent = match dir.get(root, &self.nodes[parent as usize].path) {
                    Ok(fd) => fd,
                    Err(e) => {
                        if e.raw_os_error() != Some(libc::ENOENT) {
                            out.error(format!(
                                "cgroups: {}: {e}",
                                self.nodes[parent as usize].path
                            ));
                        }
                        return;
                    }
                };
                let name = child.path.rsplit('/').next().unwrap_or_default().as_bytes();
                let fd = match sys::dir::open_at(parent, name, libc::O_RDONLY | libc::O_DIRECTORY) {
                    Ok(fd) => fd,
                    // Removed since the listing, or not a directory.
                    Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => {
                        return;
                    }
                    Err(e) => {
                        out.error(format!("cgroups: {}: {e}", child.path));
                        return;
                    }
                };
                let raw = fd.as_raw_fd();
                match i.or_else(|| {
                    self.node_of(&child.path, || inode(raw).unwrap_or(0), hi, depth + 1)
                }) {
                    Some(i) => self.visit(hi, i, Dir::held(fd), out),
                    None => out.left_out += 1,
                }
            }
        }
    }

    /// Lists the children of node `i` in hierarchy `hi` when they may have
    /// changed (never listed, no watch, or its watch reported a child made
    /// or removed), watching it first; false when it was removed.
    pub(super) fn list_children(
        &mut self,
        hi: usize,
        i: Ix,
        dir: &mut Dir,
        out: &mut Sample,
    ) -> bool {
        let root = self.hiers[hi].root_fd();
        let node = &mut self.nodes[i as usize];
        let (path, depth) = (node.path.clone(), node.depth);
        let p = node.per.at(hi);
        if p.listed && p.wd >= 0 {
            out.left_out += p.left_out;
            return true;
        }
        let dir = match dir.get(root, &path) {
            Ok(fd) => fd,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                node.stale = true;
                return false;
            }
            Err(e) => {
                out.error(format!("cgroups: {path}: {e}"));
                return false;
            }
        };
        // Watched before listing: a child made meanwhile is in the listing
        // or reported by the next read's events.
        if p.wd < 0
            && self.watches.len() < self.max_watches
            && let Some(fd) = &self.notify
        {
            let full = self.hiers[hi].info.dir.join(path.trim_start_matches('/'));
            if let Ok(c) = std::ffi::CString::new(full.as_os_str().as_encoded_bytes()) {
                let mask = libc::IN_CREATE
                    | libc::IN_DELETE
                    | libc::IN_MOVED_FROM
                    | libc::IN_MOVED_TO
                    | libc::IN_ONLYDIR;
                // SAFETY: c is NUL-terminated; fd is our inotify fd.
                let wd = unsafe { libc::inotify_add_watch(fd.as_raw_fd(), c.as_ptr(), mask) };
                if wd >= 0 {
                    p.wd = wd;
                    self.watches.insert(wd, (hi, path.clone()));
                }
            }
        }
        // The children's names, in this level's reused buffer.
        let level = usize::from(depth);
        if self.names.len() <= level {
            self.names.resize_with(level + 1, Vec::new);
        }
        let mut names = std::mem::take(&mut self.names[level]);
        names.clear();
        let listed = sys::dir::entries(dir, &mut self.dents, |name, t| {
            // A filesystem that does not say (a fixture tree on some) is
            // asked when the entry is opened.
            if (t == sys::dir::DT_DIR || t == sys::dir::DT_UNKNOWN) && name != b"." && name != b".."
            {
                names.extend_from_slice(name);
                names.push(0);
            }
        });
        let node = &mut self.nodes[i as usize];
        let ok = match listed {
            Ok(()) => {
                let p = node.per.at(hi);
                p.children.clear();
                p.left_out = 0;
                for name in names.split(|b| *b == 0).filter(|n| !n.is_empty()) {
                    let Ok(s) = std::str::from_utf8(name) else {
                        p.left_out += 1;
                        continue;
                    };
                    if depth >= MAX_DEPTH {
                        p.left_out += 1;
                        continue;
                    }
                    p.children.push(Child {
                        path: if depth == 0 {
                            Arc::from(format!("/{s}"))
                        } else {
                            Arc::from(format!("{path}/{s}"))
                        },
                        node: Ix::MAX,
                        era: 0,
                    });
                }
                p.listed = true;
                out.left_out += p.left_out;
                true
            }
            // Removed since it was opened.
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                node.stale = true;
                false
            }
            Err(e) => {
                out.error(format!("cgroups: listing {path}: {e}"));
                true
            }
        };
        self.names[level] = names;
        ok
    }

    /// Marks the directories whose children changed since the last read
    /// to be listed again (all of them when the kernel's queue overflowed).
    pub(super) fn drain_events(&mut self) {
        let Some(fd) = self.notify.as_ref().map(|f| f.as_raw_fd()) else {
            return;
        };
        loop {
            // SAFETY: the kernel writes at most events.len() bytes.
            let n = unsafe { libc::read(fd, self.events.as_mut_ptr().cast(), self.events.len()) };
            if n <= 0 {
                return;
            }
            let n = n as usize;
            let mut off = 0;
            // struct inotify_event { int wd; u32 mask, cookie, len; char name[len]; }
            while off + 16 <= n {
                let word = |i: usize| {
                    u32::from_ne_bytes(
                        self.events[off + i..off + i + 4]
                            .try_into()
                            .unwrap_or_default(),
                    )
                };
                let (wd, mask, len) = (word(0) as i32, word(4), word(12) as usize);
                off += 16 + len;
                if mask & libc::IN_Q_OVERFLOW != 0 {
                    for node in &mut self.nodes {
                        for p in node.per.iter_mut() {
                            p.listed = false;
                        }
                    }
                    continue;
                }
                let Some((hi, path)) = self.watches.get(&wd).cloned() else {
                    continue;
                };
                if mask & libc::IN_IGNORED != 0 {
                    self.watches.remove(&wd);
                }
                if let Some(i) = self.by_path.get(&path) {
                    let p = self.nodes[*i as usize].per.at(hi);
                    p.listed = false;
                    if mask & libc::IN_IGNORED != 0 {
                        p.wd = -1;
                    }
                }
            }
        }
    }
}
