//! The connections being served: a cap on how many, and who makes room.
//!
//! Every connection has a slot recording when it last made progress (a read
//! or a write) and whether a request is being answered. At the cap, a new
//! connection takes the place of the one idle longest (no request in
//! progress); if every connection is busy, the new one is refused with 503.
//! So idle or stalled clients can hold slots only until someone needs them,
//! and a scraper always gets in.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::Notify;

use super::HttpStats;

/// One connection's bookkeeping.
pub(crate) struct Slot {
    /// Milliseconds since the table's epoch at the last progress.
    active_ms: AtomicU64,
    busy: AtomicBool,
    /// Notified when the connection must close to make room.
    pub(crate) evict: Notify,
    epoch: Instant,
}

impl Slot {
    pub(crate) fn touch(&self) {
        self.active_ms
            .store(self.epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    pub(crate) fn set_busy(&self, busy: bool) {
        self.busy.store(busy, Ordering::Relaxed);
        self.touch();
    }

    /// Whether a request is being answered.
    pub(crate) fn busy(&self) -> bool {
        self.busy.load(Ordering::Relaxed)
    }

    /// Time since the last progress.
    pub(crate) fn idle_for(&self) -> std::time::Duration {
        let now = self.epoch.elapsed().as_millis() as u64;
        std::time::Duration::from_millis(now.saturating_sub(self.active_ms.load(Ordering::Relaxed)))
    }
}

/// What became of a new connection.
pub(crate) enum Admit {
    In(u64, Arc<Slot>),
    /// At the cap and every connection busy.
    Full,
}

pub(crate) struct Conns {
    slots: Mutex<HashMap<u64, Arc<Slot>>>,
    next: AtomicU64,
    pub(crate) cap: usize,
    epoch: Instant,
    pub(crate) stats: Arc<HttpStats>,
}

impl Conns {
    pub(crate) fn new(cap: usize) -> Conns {
        let c = Conns {
            slots: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            cap: cap.max(1),
            epoch: Instant::now(),
            stats: Arc::new(HttpStats::default()),
        };
        c.stats.max.store(c.cap as u64, Ordering::Relaxed);
        c
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Slot>>> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    /// Takes a slot for a new connection, making room if needed.
    pub(crate) fn admit(&self) -> Admit {
        let mut slots = self.lock();
        if slots.len() >= self.cap {
            if !Self::evict_idlest(&mut slots) {
                self.stats.refused.fetch_add(1, Ordering::Relaxed);
                return Admit::Full;
            }
            self.stats.evicted.fetch_add(1, Ordering::Relaxed);
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let slot = Arc::new(Slot {
            active_ms: AtomicU64::new(0),
            busy: AtomicBool::new(false),
            evict: Notify::new(),
            epoch: self.epoch,
        });
        slot.touch();
        slots.insert(id, slot.clone());
        self.stats.open.store(slots.len() as u64, Ordering::Relaxed);
        drop(slots);
        Admit::In(id, slot)
    }

    /// Closes the connection idle longest, when one is idle; for the accept
    /// loop when the process is out of descriptors.
    pub(crate) fn evict_one(&self) -> bool {
        let done = Self::evict_idlest(&mut self.lock());
        if done {
            self.stats.evicted.fetch_add(1, Ordering::Relaxed);
        }
        done
    }

    fn evict_idlest(slots: &mut HashMap<u64, Arc<Slot>>) -> bool {
        let idlest = slots
            .iter()
            .filter(|(_, s)| !s.busy.load(Ordering::Relaxed))
            .min_by_key(|(_, s)| s.active_ms.load(Ordering::Relaxed))
            .map(|(id, _)| *id);
        // Its task removes nothing more when it ends (the id is gone).
        match idlest.and_then(|id| slots.remove(&id)) {
            Some(s) => {
                // notify_one keeps a permit if the task is not waiting yet.
                s.evict.notify_one();
                true
            }
            None => false,
        }
    }

    pub(crate) fn remove(&self, id: u64) {
        let mut slots = self.lock();
        slots.remove(&id);
        self.stats.open.store(slots.len() as u64, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_the_cap_the_idlest_idle_connection_makes_room_and_busy_ones_stay() {
        let c = Conns::new(2);
        let Admit::In(a, sa) = c.admit() else {
            panic!()
        };
        std::thread::sleep(std::time::Duration::from_millis(5));
        let Admit::In(b, sb) = c.admit() else {
            panic!()
        };
        // a is the idlest: the third connection takes its place.
        let Admit::In(_, _sc) = c.admit() else {
            panic!()
        };
        assert_eq!(c.len(), 2);
        assert!(!c.lock().contains_key(&a) && c.lock().contains_key(&b));
        drop(sa);
        // Every connection busy: refused.
        sb.set_busy(true);
        _sc.set_busy(true);
        assert!(matches!(c.admit(), Admit::Full));
        assert_eq!(c.stats.refused.load(Ordering::Relaxed), 1);
        assert_eq!(c.stats.evicted.load(Ordering::Relaxed), 1);
        sb.set_busy(false);
        assert!(matches!(c.admit(), Admit::In(..)));
        assert!(!c.lock().contains_key(&b));
    }
}
