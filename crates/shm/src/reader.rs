//! A local reader of the snapshot: mapped read-only, read without a
//! system call, asking the agent for a fresher one through a futex.

use super::*;

/// A local consumer's side.
pub struct ShmReader {
    pub(super) map: Map,
    pub(super) ncpu: u32,
    pub(super) writable: bool,
    pub(super) path: PathBuf,
}

impl ShmReader {
    /// Maps the snapshot at `path`: read-write when permitted (so that
    /// [`ShmReader::read_fresh`] can ask for a sample), else read-only.
    pub fn open(path: &Path) -> Result<ShmReader, Error> {
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let (file, writable) = match OpenOptions::new().read(true).write(true).open(path) {
            Ok(f) => (f, true),
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                (File::open(path).map_err(io)?, false)
            }
            Err(e) => return Err(io(e)),
        };
        let len = file.metadata().map_err(io)?.len() as usize;
        let bad = |what: String| Error::NotSnapshot {
            path: path.to_path_buf(),
            what,
        };
        if len < total_bytes(0) {
            return Err(bad(format!("{len} bytes, shorter than the header")));
        }
        let map = Map::new(Some(&file), len, writable).map_err(io)?;
        let h = map.header();
        if h.magic != MAGIC {
            return Err(bad(format!("magic {:?}", h.magic)));
        }
        if h.version != VERSION {
            return Err(Error::Version {
                path: path.to_path_buf(),
                found: h.version,
            });
        }
        if h.total_bytes as usize != len || total_bytes(h.ncpu) != len {
            return Err(bad(format!(
                "{len} bytes, header says {} for {} CPUs",
                h.total_bytes, h.ncpu
            )));
        }
        let ncpu = h.ncpu;
        Ok(ShmReader {
            map,
            ncpu,
            writable,
            path: path.to_path_buf(),
        })
    }

    /// Whether the agent that wrote the snapshot still runs (it holds the
    /// lock on `<path>.lock` while it lives, however it ends); `None` when
    /// there is no lock file to ask.
    pub fn agent_alive(&self) -> Option<bool> {
        let f = File::open(lock_path(&self.path)).ok()?;
        lock_held(&f).ok()
    }

    /// Fails unless the agent is live: [`Error::Stopped`] when it marked
    /// the snapshot stopped, [`Error::Gone`] when it died without doing so.
    /// One system call or two: for one-shot readers, not every read.
    pub fn check_live(&self) -> Result<(), Error> {
        if self.stopped() {
            return Err(Error::Stopped);
        }
        if self.agent_alive() == Some(false) {
            return Err(Error::Gone {
                path: self.path.clone(),
                pid: Some(self.agent_pid()),
            });
        }
        Ok(())
    }

    /// Wakes the agent's sampler (it then does what it has been asked
    /// for: a fresh read, a view a viewer wants); false when this reader
    /// may not (the snapshot is read-only to it).
    pub fn wake(&self) -> bool {
        if self.writable {
            request(self.map.header());
        }
        self.writable
    }

    pub fn agent_pid(&self) -> u32 {
        self.map.header().agent_pid
    }

    /// The agent's publish counter: it adds 1 after each publish (and
    /// when it stops).
    pub fn published_count(&self) -> u32 {
        self.map.header().published.load(Ordering::Acquire)
    }

    /// Sleeps (no timer while the agent publishes) until the publish
    /// counter differs from `seen`, or `timeout`.
    pub fn wait_published(&self, seen: u32, timeout: Duration) {
        wait_published(self.map.header(), seen, timeout)
    }

    pub fn stopped(&self) -> bool {
        self.map.header().state.load(Ordering::Acquire) != STATE_LIVE
    }

    /// The agent's interval and floor for these sources.
    pub fn intervals(&self) -> (Duration, Duration) {
        let h = self.map.header();
        (
            Duration::from_nanos(h.interval_ns.load(Ordering::Relaxed)),
            Duration::from_nanos(h.min_interval_ns.load(Ordering::Relaxed)),
        )
    }

    /// Copies the latest snapshot into `out` (its per-CPU vector reused):
    /// no system call. Fails when the agent has stopped.
    pub fn read(&self, out: &mut Snapshot) -> Result<(), Error> {
        if self.stopped() {
            return Err(Error::Stopped);
        }
        let h = self.map.header();
        let w = self.map.words();
        for attempt in 0..10_000 {
            let s1 = h.seq.load(Ordering::Acquire);
            if s1 & 1 == 1 {
                if attempt > 100 {
                    std::thread::yield_now();
                }
                std::hint::spin_loop();
                continue;
            }
            let get = |i: usize| w[i].load(Ordering::Relaxed);
            out.unix_ns = get(0);
            out.mono_ns = get(1);
            for (i, t) in out.cpu_ticks.iter_mut().enumerate() {
                *t = get(2 + i);
            }
            out.intr_total = get(12);
            out.ctxt = get(13);
            out.forks = get(14);
            out.procs_running = get(15);
            out.procs_blocked = get(16);
            out.btime_secs = get(17);
            out.softirq_total = get(18);
            out.mem_total_bytes = get(19);
            out.mem_free_bytes = get(20);
            out.mem_available_bytes = get(21);
            out.buffers_bytes = get(22);
            out.cached_bytes = get(23);
            out.swap_total_bytes = get(24);
            out.swap_free_bytes = get(25);
            out.load = [
                f64::from_bits(get(26)),
                f64::from_bits(get(27)),
                f64::from_bits(get(28)),
            ];
            let n = (get(29) as usize).min(self.ncpu as usize);
            out.cpus.resize(n, CpuSlot::default());
            for (i, c) in out.cpus.iter_mut().enumerate() {
                let base = FIXED_WORDS + PER_CPU_WORDS * i;
                c.cpu = get(base) as u32;
                for (m, t) in c.ticks.iter_mut().enumerate() {
                    *t = get(base + 1 + m);
                }
            }
            fence(Ordering::Acquire);
            if h.seq.load(Ordering::Relaxed) == s1 {
                return Ok(());
            }
        }
        Err(Error::Torn)
    }

    /// Like [`ShmReader::read`], but the sample is no older than `max_age`
    /// was at the moment of the call (with `max_age` 0: read after the call
    /// began): if the published one is older, asks the agent for one and
    /// sleeps until it is published (at most `timeout`). The agent still
    /// never reads more often than its floor, and serves readers that ask
    /// together with one read.
    pub fn read_fresh(
        &self,
        max_age: Duration,
        timeout: Duration,
        out: &mut Snapshot,
    ) -> Result<(), Error> {
        let max_age_ns = max_age.as_nanos().min(u64::MAX as u128) as u64;
        let start = mono_ns();
        // The oldest read this call accepts, fixed when it is made. Asking
        // again after a wakeup must not move it: a later instant would make
        // the agent read once more although the read under way (begun after
        // `start`) already satisfies this call.
        let since = start.saturating_sub(max_age_ns).max(1);
        let timeout_ns = timeout.as_nanos().min(u64::MAX as u128) as u64;
        let h = self.map.header();
        loop {
            // Load the publish counter before looking at the data: a publish
            // after this changes it, so the wait below cannot miss one.
            let seen = h.published.load(Ordering::Acquire);
            self.read(out)?;
            if out.mono_ns >= since {
                return Ok(());
            }
            if !self.writable {
                return Err(Error::ReadOnly);
            }
            let waited = mono_ns().saturating_sub(start);
            if waited >= timeout_ns {
                self.check_live()?;
                return Err(Error::Timeout { max_age, timeout });
            }
            self.map.words()[WANT_SINCE].fetch_max(since, Ordering::AcqRel);
            self.wake();
            wait_published(h, seen, Duration::from_nanos(timeout_ns - waited));
        }
    }
}
