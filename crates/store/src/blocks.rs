//! A block: the samples of one flush, of one kind, in one day file. System
//! blocks hold one section per source, each compressed on its own, so a
//! report on one source decompresses only that one. A keyframe block
//! starts every chain: its first read of each source has its template and
//! absolute numbers; later reads carry the template only when it changed
//! and their numbers as deltas.

use procfs::Source;

use crate::codec::{
    get_bytes, get_delta, get_varint, join_numbers, put_bytes, put_delta, put_varint, split_numbers,
};

const LEVEL: i32 = 3;

pub fn compress(raw: &[u8]) -> Vec<u8> {
    zstd::bulk::compress(raw, LEVEL).unwrap_or_default()
}

/// Decompresses at most `limit` bytes (a damaged block cannot make memory
/// grow without bound).
pub fn decompress(z: &[u8], limit: usize) -> Option<Vec<u8>> {
    zstd::bulk::decompress(z, limit).ok()
}

/// The largest section or block the store writes or reads back.
pub const MAX_RAW: usize = 256 << 20;

#[derive(Default, Clone)]
struct Chain {
    template: Vec<u8>,
    numbers: Vec<u64>,
}

/// The writer's side of the system chains.
#[derive(Default)]
pub struct SysEncoder {
    chains: Vec<Chain>,
    template: Vec<u8>,
    numbers: Vec<u64>,
}

impl SysEncoder {
    pub fn reset(&mut self) {
        self.chains = vec![Chain::default(); Source::COUNT];
    }

    /// Encodes the samples (time, [`procfs::kept`] entries) into a block
    /// body; per source, the raw and compressed bytes.
    pub fn encode(
        &mut self,
        samples: &[(u64, &[u8])],
        out: &mut Vec<u8>,
    ) -> Vec<(Source, usize, usize)> {
        if self.chains.len() != Source::COUNT {
            self.reset();
        }
        out.clear();
        put_varint(out, samples.len() as u64);
        let mut last = 0;
        for (ts, _) in samples {
            put_delta(out, last, *ts);
            last = *ts;
        }
        struct Section {
            src: Source,
            bytes: Vec<u8>,
            filled: usize,
        }
        let mut sections: Vec<Section> = Vec::new();
        let mut at = vec![usize::MAX; Source::COUNT];
        for (i, (_, kept)) in samples.iter().enumerate() {
            for (src, bytes) in procfs::kept::entries(kept) {
                if at[src as usize] == usize::MAX {
                    at[src as usize] = sections.len();
                    sections.push(Section {
                        src,
                        bytes: Vec::new(),
                        filled: 0,
                    });
                }
                let sec = &mut sections[at[src as usize]];
                if sec.filled > i {
                    continue; // read twice in one sample: the first counts
                }
                // One flag byte per sample: 0 for those without this source.
                sec.bytes.extend(std::iter::repeat_n(0, i - sec.filled));
                sec.filled = i + 1;
                split_numbers(bytes, &mut self.template, &mut self.numbers);
                let chain = &mut self.chains[src as usize];
                let out = &mut sec.bytes;
                if chain.template == self.template {
                    out.push(1);
                } else {
                    out.push(2);
                    put_bytes(out, &self.template);
                    chain.template.clone_from(&self.template);
                }
                put_varint(out, self.numbers.len() as u64);
                let delta = chain.numbers.len() == self.numbers.len();
                for (k, v) in self.numbers.iter().enumerate() {
                    put_delta(out, if delta { chain.numbers[k] } else { 0 }, *v);
                }
                chain.numbers.clone_from(&self.numbers);
            }
        }
        let mut sizes = Vec::new();
        put_varint(out, sections.len() as u64);
        for mut sec in sections {
            sec.bytes
                .extend(std::iter::repeat_n(0, samples.len() - sec.filled));
            let z = compress(&sec.bytes);
            out.push(sec.src as u8);
            put_bytes(out, &z);
            sizes.push((sec.src, sec.bytes.len(), z.len()));
        }
        sizes
    }
}

/// The reader's side: per source, the chain so far.
#[derive(Default, Clone)]
pub struct SysDecoder {
    chains: Vec<Chain>,
}

/// One block decoded for the sources asked: per sample, its time and the
/// sources' bytes as read.
pub struct SysBlock {
    pub times: Vec<u64>,
    /// Per sample, (source, bytes) for those read in it.
    pub files: Vec<Vec<(Source, Vec<u8>)>>,
}

impl SysDecoder {
    pub fn reset(&mut self) {
        self.chains = vec![Chain::default(); Source::COUNT];
    }

    /// Decodes `body` for `want` (a bit per source index); `None` if
    /// it is malformed (the chain is then broken until the next keyframe).
    pub fn decode(&mut self, body: &[u8], want: u128) -> Option<SysBlock> {
        if self.chains.len() != Source::COUNT {
            self.reset();
        }
        let mut pos = 0;
        let n = usize::try_from(get_varint(body, &mut pos)?).ok()?;
        if n > 1 << 20 {
            return None;
        }
        let mut times = Vec::with_capacity(n);
        let mut last = 0;
        for _ in 0..n {
            last = get_delta(body, &mut pos, last)?;
            times.push(last);
        }
        let mut files = vec![Vec::new(); n];
        let nsec = get_varint(body, &mut pos)?;
        let mut text = Vec::new();
        for _ in 0..nsec {
            let src = *Source::ALL.get(*body.get(pos)? as usize)?;
            pos += 1;
            let z = get_bytes(body, &mut pos)?;
            if want & 1u128 << (src as usize) == 0 {
                continue;
            }
            let sec = decompress(z, MAX_RAW)?;
            let chain = &mut self.chains[src as usize];
            let mut p = 0;
            for f in files.iter_mut() {
                match *sec.get(p)? {
                    0 => {
                        p += 1;
                        continue;
                    }
                    1 => p += 1,
                    2 => {
                        p += 1;
                        chain.template = get_bytes(&sec, &mut p)?.to_vec();
                    }
                    _ => return None,
                }
                let count = usize::try_from(get_varint(&sec, &mut p)?).ok()?;
                if count > sec.len() {
                    return None;
                }
                let delta = chain.numbers.len() == count;
                if !delta {
                    chain.numbers = vec![0; count];
                }
                for v in chain.numbers.iter_mut() {
                    *v = get_delta(&sec, &mut p, *v)?;
                }
                join_numbers(&chain.template, &chain.numbers, &mut text)?;
                f.push((src, text.clone()));
            }
        }
        Some(SysBlock { times, files })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(files: &[(Source, &str)]) -> Vec<u8> {
        let mut k = Vec::new();
        for (s, t) in files {
            procfs::kept::append(&mut k, *s, t.as_bytes());
        }
        k
    }

    #[test]
    fn blocks_give_back_every_file_as_read_across_a_chain() {
        let a = kept(&[
            (Source::Stat, "cpu  1 2 3\nctxt 100\n"),
            (Source::Loadavg, "0.00 0.01 0.05 1/80 99\n"),
        ]);
        let b = kept(&[(Source::Stat, "cpu  2 2 3\nctxt 150\n")]);
        let c = kept(&[
            (Source::Stat, "cpu  2 2 3\nctxt 150\nbtime 7\n"),
            (Source::Loadavg, "0.10 0.01 0.05 2/81 100\n"),
        ]);
        let mut enc = SysEncoder::default();
        let mut dec = SysDecoder::default();
        let mut body = Vec::new();
        enc.encode(&[(1000, &a), (2000, &b)], &mut body);
        let first = dec.decode(&body, u128::MAX).unwrap();
        assert_eq!(first.times, [1000, 2000]);
        assert_eq!(
            first.files[1],
            [(Source::Stat, b"cpu  2 2 3\nctxt 150\n".to_vec())]
        );
        // The next block carries deltas against the first.
        enc.encode(&[(3000, &c)], &mut body);
        let second = dec
            .decode(&body, 1u128 << Source::Loadavg as usize)
            .unwrap();
        assert_eq!(
            second.files[0],
            [(Source::Loadavg, b"0.10 0.01 0.05 2/81 100\n".to_vec())]
        );
        // Asked for stat too, after skipping it once: a reader decodes every
        // block of a source from its keyframe, so this one starts over.
        let mut dec2 = SysDecoder::default();
        let mut enc2 = SysEncoder::default();
        enc2.encode(&[(1000, &a), (2000, &b)], &mut body);
        dec2.decode(&body, u128::MAX).unwrap();
        enc2.encode(&[(3000, &c)], &mut body);
        let s = dec2.decode(&body, u128::MAX).unwrap();
        assert_eq!(s.files[0][0].1, b"cpu  2 2 3\nctxt 150\nbtime 7\n");
    }

    #[test]
    fn a_damaged_block_is_refused_not_misread() {
        let a = kept(&[(Source::Stat, "cpu  1 2 3\n")]);
        let mut body = Vec::new();
        SysEncoder::default().encode(&[(1, &a)], &mut body);
        for i in 0..body.len() {
            let mut bad = body.clone();
            bad[i] ^= 0x55;
            // Either refused or decoded to something: never a panic.
            let _ = SysDecoder::default().decode(&bad, u128::MAX);
        }
        assert!(
            SysDecoder::default()
                .decode(&body[..body.len() - 1], u128::MAX)
                .is_none()
        );
    }
}
