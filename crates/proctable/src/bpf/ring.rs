//! The reader's end of a BPF ring buffer (`BPF_MAP_TYPE_RINGBUF`) with its
//! data mapped once.
//!
//! The usual consumer (libbpf's, the loader library's) maps the data area
//! twice in a row, so that a record that wraps round the end reads as one
//! slice. The kernel maps every page of the mapping at mmap, so the second
//! copy is as resident as the first: a 4 MiB ring counts 8 MiB in the
//! reader's RSS from its first moment. Here the data is mapped once and a
//! record that wraps is copied out in two pieces (exits are 112 bytes: a
//! few of every 37,000 wrap).
//!
//! The protocol is the kernel's (kernel/bpf/ringbuf.c): a consumer page the
//! reader writes its position to, a producer page, then the data; each
//! record has an 8-byte header whose first word is its length with a busy
//! bit (being written) and a discard bit, and records start 8-byte aligned.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use aya::maps::MapData;

use super::load::{bpf_err, map_shared};
use crate::error::Result;

const BUSY: u32 = 1 << 31;
const DISCARD: u32 = 1 << 30;
const HEADER: u64 = 8;

/// A ring buffer map's reading end.
pub(crate) struct Ring {
    map: MapData,
    /// The consumer position's page (read-write).
    consumer: *mut libc::c_void,
    /// The producer position's page, then the data once (read-only).
    producer: *mut libc::c_void,
    page: usize,
    /// Data bytes: a power of two.
    size: usize,
}

// SAFETY: the mappings are owned by the Ring and only read (and the
// consumer position written) through &mut self.
unsafe impl Send for Ring {}

fn map_pages(
    fd: i32,
    len: usize,
    prot: i32,
    offset: usize,
    what: &str,
) -> Result<*mut libc::c_void> {
    map_shared(fd, len, prot, offset)
        .map_err(|e| bpf_err("qs_exits")(format!("mapping its {what}: {e}")))
}

impl Ring {
    /// Maps ring `map` of `size` data bytes (its max_entries, a power of
    /// two and a multiple of the page size).
    pub(crate) fn new(map: MapData, size: usize, page: usize) -> Result<Ring> {
        if !size.is_power_of_two() || !size.is_multiple_of(page) {
            return Err(bpf_err("qs_exits")(format!(
                "{size} data bytes: not a power of two of pages"
            )));
        }
        let fd = map.fd().as_fd().as_raw_fd();
        let consumer = map_pages(
            fd,
            page,
            libc::PROT_READ | libc::PROT_WRITE,
            0,
            "consumer page",
        )?;
        let producer = match map_pages(fd, page + size, libc::PROT_READ, page, "data") {
            Ok(p) => p,
            Err(e) => {
                // SAFETY: unmaps the page just mapped.
                unsafe { libc::munmap(consumer, page) };
                return Err(e);
            }
        };
        Ok(Ring {
            map,
            consumer,
            producer,
            page,
            size,
        })
    }

    /// The map's fd: readable (epoll) once the producer's wakeup came.
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.map.fd().as_fd()
    }

    fn consumer_pos(&self) -> &AtomicU64 {
        // SAFETY: the consumer page starts with the kernel's u64 position,
        // page-aligned; it lives as long as self.
        unsafe { &*self.consumer.cast::<AtomicU64>() }
    }

    fn producer_pos(&self) -> &AtomicU64 {
        // SAFETY: as consumer_pos, for the producer page.
        unsafe { &*self.producer.cast::<AtomicU64>() }
    }

    fn data(&self) -> *const u8 {
        // SAFETY: the data follows the producer page in the mapping.
        unsafe { self.producer.cast::<u8>().add(self.page) }
    }

    /// Calls `each` with every record committed since the last call, in
    /// order (a wrapping one copied into `scratch`), and hands the space
    /// back to the producer after each. Stops at a record still being
    /// written.
    pub(crate) fn drain(&mut self, scratch: &mut Vec<u8>, each: impl FnMut(&[u8])) {
        // SAFETY: the data mapping holds `size` bytes after the producer
        // page, for as long as self.
        let data = unsafe { std::slice::from_raw_parts(self.data(), self.size) };
        drain(
            self.consumer_pos(),
            self.producer_pos(),
            data,
            scratch,
            each,
        );
    }
}

/// The consumer's loop over `data` (a power of two of bytes, 8-aligned)
/// between the two positions.
fn drain(
    consumer: &AtomicU64,
    producer: &AtomicU64,
    data: &[u8],
    scratch: &mut Vec<u8>,
    mut each: impl FnMut(&[u8]),
) {
    let size = data.len() as u64;
    let mask = size - 1;
    let mut cons = consumer.load(Ordering::Acquire);
    loop {
        let prod = producer.load(Ordering::Acquire);
        if cons >= prod {
            return;
        }
        while cons < prod {
            let at = (cons & mask) as usize;
            // SAFETY: headers are 8-byte aligned inside the data (records
            // start 8-aligned and the data is a whole number of them).
            let header = unsafe { &*data[at..at + 4].as_ptr().cast::<AtomicU32>() };
            let len = header.load(Ordering::Acquire);
            if len & BUSY != 0 {
                return;
            }
            let body = u64::from(len & !(BUSY | DISCARD));
            if len & DISCARD == 0 && body <= size - HEADER {
                let start = ((at as u64 + HEADER) & mask) as usize;
                let first = (size - start as u64).min(body) as usize;
                // The producer does not touch a committed record until the
                // consumer position passes it.
                let head = &data[start..start + first];
                if first as u64 == body {
                    each(head);
                } else {
                    scratch.clear();
                    scratch.extend_from_slice(head);
                    scratch.extend_from_slice(&data[..body as usize - first]);
                    each(scratch);
                }
            }
            cons += (body + HEADER + 7) & !7;
            consumer.store(cons, Ordering::Release);
        }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what new() mapped.
        unsafe {
            libc::munmap(self.consumer, self.page);
            libc::munmap(self.producer, self.page + self.size);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ring of 64 data bytes holding records written as the kernel
    /// writes them: (position, length word, body).
    fn ring(records: &[(u64, u32, &[u8])]) -> Vec<u64> {
        let mut words = vec![0u64; 8];
        // SAFETY: viewing the u64s as bytes.
        let bytes = unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), 64) };
        for &(pos, len, body) in records {
            let at = (pos % 64) as usize;
            bytes[at..at + 4].copy_from_slice(&len.to_ne_bytes());
            for (i, b) in body.iter().enumerate() {
                bytes[(at + 8 + i) % 64] = *b;
            }
        }
        words
    }

    fn read(words: &[u64], cons: u64, prod: u64) -> (Vec<Vec<u8>>, u64) {
        // SAFETY: viewing the u64s as bytes.
        let data = unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), 64) };
        let (c, p) = (AtomicU64::new(cons), AtomicU64::new(prod));
        let mut got = Vec::new();
        drain(&c, &p, data, &mut Vec::new(), |r| got.push(r.to_vec()));
        (got, c.into_inner())
    }

    #[test]
    fn records_come_in_order_and_one_that_wraps_comes_whole() {
        // At 40: 5 bytes; at 56: 12 bytes whose body wraps to the start;
        // at 80 (16 in the data): discarded. 56 bytes in flight: no more
        // than the ring holds.
        let w = ring(&[
            (40, 5, b"abcde"),
            (56, 12, b"0123456789AB"),
            (80, DISCARD | 4, b"xxxx"),
        ]);
        let (got, cons) = read(&w, 40, 96);
        assert_eq!(got, [b"abcde".to_vec(), b"0123456789AB".to_vec()]);
        assert_eq!(cons, 96);
    }

    #[test]
    fn a_record_being_written_stops_the_drain_before_it() {
        let w = ring(&[(0, 4, b"done"), (16, BUSY | 4, b"half")]);
        let (got, cons) = read(&w, 0, 32);
        assert_eq!(got, [b"done".to_vec()]);
        assert_eq!(cons, 16);
    }

    #[test]
    fn a_body_wrapping_mid_way_is_joined() {
        // Header at 48, body 56..72: 8 bytes before the end, 8 after.
        let w = ring(&[(48, 16, b"ABCDEFGHIJKLMNOP")]);
        let (got, cons) = read(&w, 48, 72);
        assert_eq!(got, [b"ABCDEFGHIJKLMNOP".to_vec()]);
        assert_eq!(cons, 72);
    }
}
