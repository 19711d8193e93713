//! Where a member lies in a kernel structure, from the kernel's BTF
//! (`/sys/kernel/btf/vmlinux`; format in the kernel's
//! Documentation/bpf/btf.rst): the byte offset and size of a path such as
//! `se.sum_exec_runtime` or `rss_stat[3].count` in `task_struct` or
//! `mm_struct`. Used to report which cache lines each field of the walk
//! costs; the loader library relocates the programs themselves.
//!
//! Only what a member path needs is kept: each type's kind, name, size or
//! referenced type, and the members of structs and unions. Every read is
//! bounds-checked: a truncated or odd file gives an error, not a panic.

use std::collections::HashMap;
use sys::{Error, ErrorKind};

const MAGIC: u16 = 0xeb9f;
const KIND_INT: u32 = 1;
const KIND_PTR: u32 = 2;
const KIND_ARRAY: u32 = 3;
const KIND_STRUCT: u32 = 4;
const KIND_UNION: u32 = 5;
const KIND_ENUM: u32 = 6;
const KIND_TYPEDEF: u32 = 8;
const KIND_VOLATILE: u32 = 9;
const KIND_CONST: u32 = 10;
const KIND_RESTRICT: u32 = 11;
const KIND_FUNC_PROTO: u32 = 13;
const KIND_VAR: u32 = 14;
const KIND_DATASEC: u32 = 15;
const KIND_DECL_TAG: u32 = 17;
const KIND_TYPE_TAG: u32 = 18;
const KIND_ENUM64: u32 = 19;

#[derive(Clone, Copy)]
struct Member {
    name: u32,
    ty: u32,
    /// Bits from the start of the enclosing struct or union.
    bit_offset: u32,
}

struct Type {
    kind: u32,
    /// Size in bytes (int, enum, struct, union) or the referenced type.
    size_or_type: u32,
    /// Array: (element type, element count).
    array: (u32, u32),
    members: std::ops::Range<usize>,
}

/// The kernel's types, enough to find members.
pub struct KernelTypes {
    strings: Vec<u8>,
    /// Index 0 is `void`; type ids start at 1.
    types: Vec<Type>,
    members: Vec<Member>,
    structs: HashMap<String, u32>,
}

/// A member's place: byte offset from the start of the outer struct, and
/// byte size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    pub offset: u64,
    pub size: u64,
}

fn u32_at(b: &[u8], at: usize) -> Result<u32, Error> {
    b.get(at..at + 4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .ok_or_else(|| {
            Error::malformed(
                "BTF",
                Some(at as u64),
                format!("ends at byte {} inside a record at {at}", b.len()),
            )
        })
}

impl KernelTypes {
    /// The running kernel's types.
    pub fn running() -> Result<KernelTypes, Error> {
        let path = "/sys/kernel/btf/vmlinux";
        let data = std::fs::read(path).map_err(|e| Error::io(format!("reading {path}"), e))?;
        KernelTypes::parse(&data).map_err(|e| Error {
            what: path.into(),
            ..e
        })
    }

    /// Parses raw (little-endian) BTF.
    pub fn parse(data: &[u8]) -> Result<KernelTypes, Error> {
        let magic = data
            .get(..2)
            .map(|m| u16::from_le_bytes([m[0], m[1]]))
            .ok_or_else(|| Error::malformed("BTF", Some(0), "shorter than a BTF header"))?;
        if magic != MAGIC {
            return Err(Error::malformed(
                "BTF",
                Some(0),
                format!("magic 0x{magic:04x}, not BTF's 0x{MAGIC:04x} (little-endian only)"),
            ));
        }
        let hdr_len = u32_at(data, 4)? as usize;
        let section = |off_at: usize| -> Result<&[u8], Error> {
            let off = u32_at(data, off_at)? as usize;
            let len = u32_at(data, off_at + 4)? as usize;
            let start = hdr_len.saturating_add(off);
            data.get(start..start.saturating_add(len)).ok_or_else(|| {
                Error::malformed(
                    "BTF",
                    Some(off_at as u64),
                    format!("section at {start} of {len} bytes past the file's end"),
                )
            })
        };
        let type_bytes = section(8)?;
        let strings = section(16)?.to_vec();
        let mut types = vec![Type {
            kind: 0,
            size_or_type: 0,
            array: (0, 0),
            members: 0..0,
        }];
        let mut members = Vec::new();
        let mut structs = HashMap::new();
        let mut at = 0;
        while at < type_bytes.len() {
            let name = u32_at(type_bytes, at)?;
            let info = u32_at(type_bytes, at + 4)?;
            let size_or_type = u32_at(type_bytes, at + 8)?;
            at += 12;
            let kind = (info >> 24) & 0x1f;
            let vlen = (info & 0xffff) as usize;
            let bitfields = info >> 31 == 1;
            let mut ty = Type {
                kind,
                size_or_type,
                array: (0, 0),
                members: members.len()..members.len(),
            };
            match kind {
                KIND_INT | KIND_VAR | KIND_DECL_TAG => at += 4,
                KIND_ARRAY => {
                    ty.array = (u32_at(type_bytes, at)?, u32_at(type_bytes, at + 8)?);
                    at += 12;
                }
                KIND_STRUCT | KIND_UNION => {
                    for _ in 0..vlen {
                        let offset = u32_at(type_bytes, at + 8)?;
                        members.push(Member {
                            name: u32_at(type_bytes, at)?,
                            ty: u32_at(type_bytes, at + 4)?,
                            bit_offset: if bitfields {
                                offset & 0xff_ffff
                            } else {
                                offset
                            },
                        });
                        at += 12;
                    }
                    ty.members = ty.members.start..members.len();
                }
                KIND_ENUM | KIND_FUNC_PROTO => at += 8 * vlen,
                KIND_DATASEC | KIND_ENUM64 => at += 12 * vlen,
                0 | 20.. => {
                    return Err(Error::malformed(
                        "BTF",
                        Some((hdr_len + at) as u64),
                        format!("type {} has unknown kind {kind}", types.len()),
                    ));
                }
                _ => {}
            }
            if kind == KIND_STRUCT && name != 0 {
                let id = types.len() as u32;
                let n = str_at(&strings, name).to_string();
                // The first definition wins; later ones are the same type
                // seen from another unit.
                structs.entry(n).or_insert(id);
            }
            types.push(ty);
        }
        Ok(KernelTypes {
            strings,
            types,
            members,
            structs,
        })
    }

    fn ty(&self, id: u32) -> Result<&Type, Error> {
        self.types
            .get(id as usize)
            .ok_or_else(|| Error::malformed("BTF", None, format!("type id {id} out of range")))
    }

    /// Through typedefs and qualifiers to the type itself.
    fn resolve(&self, mut id: u32) -> Result<u32, Error> {
        for _ in 0..32 {
            let t = self.ty(id)?;
            match t.kind {
                KIND_TYPEDEF | KIND_VOLATILE | KIND_CONST | KIND_RESTRICT | KIND_TYPE_TAG => {
                    id = t.size_or_type
                }
                _ => return Ok(id),
            }
        }
        Err(Error::malformed(
            "BTF",
            None,
            format!("type id {id}: typedef chain too long"),
        ))
    }

    fn size(&self, id: u32) -> Result<u64, Error> {
        let id = self.resolve(id)?;
        let t = self.ty(id)?;
        Ok(match t.kind {
            KIND_INT | KIND_ENUM | KIND_STRUCT | KIND_UNION | KIND_ENUM64 => t.size_or_type.into(),
            KIND_PTR => 8,
            KIND_ARRAY => self.size(t.array.0)? * u64::from(t.array.1),
            k => {
                return Err(Error::malformed(
                    "BTF",
                    None,
                    format!("type id {id} of kind {k} has no size"),
                ));
            }
        })
    }

    /// The member `name` of struct or union `id`, looking into anonymous
    /// members: (its type, its byte offset in `id`).
    fn member(&self, id: u32, name: &str) -> Result<Option<(u32, u64)>, Error> {
        let t = self.ty(self.resolve(id)?)?;
        if t.kind != KIND_STRUCT && t.kind != KIND_UNION {
            return Ok(None);
        }
        for m in &self.members[t.members.clone()] {
            let here = u64::from(m.bit_offset / 8);
            if m.name == 0 {
                if let Some((ty, off)) = self.member(m.ty, name)? {
                    return Ok(Some((ty, here + off)));
                }
            } else if str_at(&self.strings, m.name) == name {
                return Ok(Some((m.ty, here)));
            }
        }
        Ok(None)
    }

    /// Where `path` (members joined by `.`, each optionally indexed `[N]`)
    /// lies in `struct strukt`.
    pub fn place(&self, strukt: &str, path: &str) -> Result<Place, Error> {
        let mut ty = *self.structs.get(strukt).ok_or_else(|| {
            Error::new(
                ErrorKind::Absent,
                format!("no struct {strukt} in the kernel's BTF"),
            )
        })?;
        let mut offset = 0;
        for step in path.split('.') {
            let (name, index) = match step.split_once('[') {
                Some((n, rest)) => {
                    let i = rest
                        .strip_suffix(']')
                        .and_then(|i| i.parse::<u64>().ok())
                        .ok_or_else(|| {
                            Error::invalid(format!("{strukt}.{path}: bad index in {step:?}"))
                        })?;
                    (n, Some(i))
                }
                None => (step, None),
            };
            let (mty, moff) = self.member(ty, name)?.ok_or_else(|| {
                Error::new(
                    ErrorKind::Absent,
                    format!("struct {strukt} has no member {path:?} here"),
                )
            })?;
            offset += moff;
            ty = mty;
            if let Some(i) = index {
                let arr = self.ty(self.resolve(ty)?)?;
                if arr.kind != KIND_ARRAY || i >= u64::from(arr.array.1) {
                    return Err(Error::malformed(
                        "BTF",
                        None,
                        format!("{strukt}.{path}: {name} has no element {i}"),
                    ));
                }
                ty = arr.array.0;
                offset += i * self.size(ty)?;
            }
        }
        Ok(Place {
            offset,
            size: self.size(ty)?,
        })
    }
}

fn str_at(strings: &[u8], off: u32) -> &str {
    let s = strings.get(off as usize..).unwrap_or_default();
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    std::str::from_utf8(&s[..end]).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A BTF blob with: 1 int (4 bytes), 2 `struct inner { int a; int b; }`,
    /// 3 `int[4]`, 4 `struct outer { int x; struct inner in; union { int u;
    /// }; int arr[4]; }`, 5 the anonymous union.
    fn blob() -> Vec<u8> {
        let strings = b"\0int\0inner\0a\0b\0outer\0x\0in\0u\0arr\0";
        let s = |name: &str| {
            let needle = format!("\0{name}\0");
            (strings
                .windows(needle.len())
                .position(|w| w == needle.as_bytes())
                .unwrap()
                + 1) as u32
        };
        let mut t: Vec<u32> = Vec::new();
        // 1: int
        t.extend([s("int"), KIND_INT << 24, 4, 32]);
        // 2: struct inner
        t.extend([s("inner"), KIND_STRUCT << 24 | 2, 8]);
        t.extend([s("a"), 1, 0, s("b"), 1, 32]);
        // 3: int[4]
        t.extend([0, KIND_ARRAY << 24, 0, 1, 1, 4]);
        // 4: struct outer
        t.extend([s("outer"), KIND_STRUCT << 24 | 4, 36]);
        t.extend([s("x"), 1, 0, s("in"), 2, 32, 0, 5, 96, s("arr"), 3, 128]);
        // 5: union { int u; }
        t.extend([0, KIND_UNION << 24 | 1, 4]);
        t.extend([s("u"), 1, 0]);
        let types: Vec<u8> = t.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut b = Vec::new();
        b.extend(MAGIC.to_le_bytes());
        b.extend([1, 0]);
        b.extend(24u32.to_le_bytes());
        b.extend(0u32.to_le_bytes());
        b.extend((types.len() as u32).to_le_bytes());
        b.extend((types.len() as u32).to_le_bytes());
        b.extend((strings.len() as u32).to_le_bytes());
        b.extend(types);
        b.extend(strings);
        b
    }

    #[test]
    fn places_of_nested_anonymous_and_indexed_members() {
        let k = KernelTypes::parse(&blob()).unwrap();
        let p = |path| k.place("outer", path).unwrap();
        assert_eq!(p("x"), Place { offset: 0, size: 4 });
        assert_eq!(p("in"), Place { offset: 4, size: 8 });
        assert_eq!(p("in.b"), Place { offset: 8, size: 4 });
        assert_eq!(
            p("u"),
            Place {
                offset: 12,
                size: 4
            }
        );
        assert_eq!(
            p("arr"),
            Place {
                offset: 16,
                size: 16
            }
        );
        assert_eq!(
            p("arr[3]"),
            Place {
                offset: 28,
                size: 4
            }
        );
        let e = |s: &str, path| k.place(s, path).unwrap_err().to_string();
        assert!(e("outer", "y").contains("no member"));
        assert!(e("outer", "arr[4]").contains("no element 4"));
        assert!(e("outer", "arr[x]").contains("bad index"));
        assert!(e("nope", "x").contains("no struct nope"));
    }

    #[test]
    fn truncated_or_foreign_data_is_an_error_not_a_panic() {
        let b = blob();
        for n in 0..b.len() {
            let _ = KernelTypes::parse(&b[..n]);
        }
        assert!(KernelTypes::parse(&b[..10]).is_err());
        let mut wrong = b.clone();
        wrong[0] = 0;
        let e = KernelTypes::parse(&wrong).err().unwrap().to_string();
        assert!(e.contains("magic"), "{e}");
        let e = KernelTypes::parse(&wrong).err().unwrap();
        assert_eq!((e.kind, e.offset), (sys::ErrorKind::Malformed, Some(0)));
        let e = KernelTypes::parse(&b[..10]).err().unwrap();
        assert_eq!(e.kind, sys::ErrorKind::Malformed);
        assert!(e.offset.is_some(), "{e}");
    }
}
