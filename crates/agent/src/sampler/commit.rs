//! One wakeup's reads from the kernel, and their commit to the shared
//! state and the shared-memory snapshot.

use super::*;

/// Exits a buffer keeps room for however few a table had: five seconds
/// at 200 exits a second.
const EXITS_KEPT: usize = 1024;

impl Agent {
    /// Reads the sources in `mask` into the sampler's own buffers, without
    /// the state's lock.
    pub(super) fn read_kernel(&mut self, mask: Mask) -> Reads {
        let mut read_at = [0u64; SOURCE_COUNT];
        let mut cpu_ns = [0u64; SOURCE_COUNT];
        // When this sample was taken: per-source reads leave the sample's
        // own times alone, so they are set here.
        self.work.taken = Instant::now();
        self.work.unix_ns = unix_ns();
        for s in Source::ALL {
            let a = AgentSource::System(s);
            if mask & a.bit() != 0 {
                read_at[a.index()] = mono_ns();
                let cpu = sys::thread_cpu_ns();
                self.reader.read_source(s, &mut self.work);
                cpu_ns[a.index()] = sys::thread_cpu_ns().saturating_sub(cpu);
            }
        }
        let procs = mask & AgentSource::Processes.bit() != 0;
        let mut procs_result = None;
        let mut procs_cost_ns = 0;
        // The exit ring is drained on every wakeup (two loads when it is
        // empty), not only with the process table: the ring holds about
        // 35,000 exits, seven seconds at 5,000 exits/s, and the table may
        // be read far less often than that.
        self.drain_exits();
        if procs && let Some(t) = self.table.as_mut() {
            let i = AgentSource::Processes.index();
            read_at[i] = mono_ns();
            let t0 = Instant::now();
            let cpu = sys::thread_cpu_ns();
            // The rows are built when the table is committed, into the
            // one readers get (`commit`).
            procs_result = Some(t.read(&self.query));
            if let Some(b) = t.bpf_mut()
                && b.walk_reloads() > self.walk_reloads
            {
                self.walk_reloads = b.walk_reloads();
                log(format!(
                    "process table: the walk's array was too small; reloaded with room for {} rows",
                    b.walk_capacity().unwrap_or(0)
                ));
            }
            if let Some(b) = t.bpf()
                && let Some(why) = b.net_unavailable()
                && !self.net_off_logged
            {
                self.net_off_logged = true;
                log(format!(
                    "process table: no network bytes per process: {why}"
                ));
            }
            if self.query.fields.has(proctable::Field::Gpu) {
                let note = t.gpu_note();
                if note != self.gpu_note {
                    if !note.is_empty() {
                        log(format!("process table: GPU figures: {note}"));
                    }
                    self.gpu_note = note;
                }
            }
            self.drain_exits();
            std::mem::swap(&mut self.exits_buf, &mut self.exits_pending);
            // The three exit buffers take turns: each gives back what a
            // burst of exits grew it to (a table read late, a build's
            // thousands of processes) when it next holds a table's worth.
            sys::trim_capacity(&mut self.exits_pending, EXITS_KEPT);
            self.exits_pending.clear();
            procs_cost_ns = t0.elapsed().as_nanos() as u64;
            cpu_ns[i] = sys::thread_cpu_ns().saturating_sub(cpu);
        }
        // One map lookup, only when the process table was read.
        let exits_lost = procs
            .then(|| self.table.as_ref().and_then(ProcTable::exits_lost))
            .flatten();
        Reads {
            read_at,
            procs: procs_result,
            procs_cost_ns,
            cpu_ns,
            exits_lost,
        }
    }

    /// Swaps what was read into the state and counts its cost; returns the
    /// sources committed (those of `mask`, but the process table when there
    /// is none to read).
    /// `keep_prev`: keep the table before the new one
    /// ([`State::procs_prev`]) for the rates of per-process series ranked
    /// by CPU; otherwise it is not kept: a table less in memory (20 MB at
    /// 64,000 processes).
    pub(super) fn commit(
        &mut self,
        st: &mut State,
        mask: Mask,
        demand: &mut Mask,
        mut reads: Reads,
        keep_prev: bool,
    ) -> Mask {
        let mut committed = 0;
        for s in AgentSource::ALL {
            let i = s.index();
            // A finished cgroup walk is committed whether or not the
            // source is due (its read began earlier).
            if mask & s.bit() == 0 && s != AgentSource::Cgroups {
                continue;
            }
            let cost_ns = match s {
                AgentSource::System(src) => {
                    st.sample.taken = self.work.taken;
                    st.sample.unix_ns = self.work.unix_ns;
                    if src.keeps_last() && !self.work.ok(src) {
                        st.sample.swap_status(&mut self.work, src);
                    } else {
                        st.sample.swap_source(&mut self.work, src);
                    }
                    // Each parse of the textfile directory counted once.
                    let parse = std::sync::Arc::as_ptr(&st.sample.textfile) as usize;
                    if src == procfs::Source::Textfile && parse != self.textfile_counted {
                        self.textfile_counted = parse;
                        self.memory.stats.shed.textfile_files += st.sample.textfile.refused as u64;
                    }
                    if st.sample.ok(src) {
                        let now = st.sample.warnings(src);
                        for w in now.iter().filter(|w| !self.warned[i].contains(w)) {
                            warn(w);
                        }
                        self.warned[i] = now;
                    }
                    let c = st.sample.cost[src as usize];
                    let stats = &mut st.stats[i];
                    stats.read_ns += c.read_ns;
                    stats.parse_ns += c.parse_ns;
                    stats.bytes += c.bytes;
                    stats.skipped_lines += u64::from(st.sample.skipped[src as usize].lines);
                    c.read_ns + c.parse_ns
                }
                AgentSource::Processes => {
                    let Some(r) = reads.procs.take() else {
                        continue;
                    };
                    // The rows are built here, under the state's lock,
                    // into the table readers get: no second table of
                    // 300 bytes a process held between reads. Should the
                    // build fail (a decoding thread panicked), the table
                    // is empty and the source says it failed.
                    // Exits taskstats gave a start to within a second
                    // take the exact one from the table before (the
                    // table they were last seen in, about to be replaced).
                    if let Some(t) = self.table.as_ref() {
                        t.settle_exits(&mut self.exits_buf, &st.procs);
                    }
                    let built = r.and_then(|()| {
                        if keep_prev {
                            std::mem::swap(&mut st.procs_prev, &mut st.procs);
                        } else {
                            st.procs_prev = Vec::new();
                        }
                        let t0 = Instant::now();
                        let cpu = sys::thread_cpu_ns();
                        let cap = self.memory.caps().rows;
                        let built = match self.table.as_mut() {
                            Some(t) => {
                                // Under a rows cap the rows past it are
                                // never built (the first table too).
                                t.set_rows_cap(cap.unwrap_or(0));
                                t.build(&self.query, &mut st.procs)
                            }
                            None => Ok(()),
                        };
                        reads.procs_cost_ns += t0.elapsed().as_nanos() as u64;
                        reads.cpu_ns[i] += sys::thread_cpu_ns().saturating_sub(cpu);
                        built
                    });
                    match built {
                        Ok(()) => {
                            // Rows under the cap: those below the floor
                            // were never built; the rest past the cap go.
                            let rows = self
                                .table
                                .as_ref()
                                .map_or(st.procs.len(), |t| t.found(&st.procs));
                            let floor = match self.memory.caps().rows {
                                Some(cap) => {
                                    crate::memory::keep_largest(&mut st.procs, cap);
                                    self.memory.stats.shed.rows += (rows - st.procs.len()) as u64;
                                    crate::memory::next_floor(&st.procs, cap, self.rss_floor)
                                }
                                None => 0,
                            };
                            if floor != self.rss_floor {
                                self.rss_floor = floor;
                                if let Some(t) = self.table.as_mut() {
                                    t.set_rss_floor(floor);
                                }
                            }
                            self.govern_memory(st, rows);
                            let now = reads.read_at[i];
                            st.procs_secs = if self.procs_read_mono == 0 {
                                0.0
                            } else {
                                (now - self.procs_read_mono) as f64 / 1e9
                            };
                            self.procs_read_mono = now;
                            st.procs_status = SourceStatus::Ok;
                            // The cgroups' network namespaces, for
                            // container_network_*: where cgroups are read.
                            if st.stats[AgentSource::Cgroups.index()].scheduled {
                                let t0 = Instant::now();
                                let cpu = sys::thread_cpu_ns();
                                self.cgroup_net.update(&st.procs, &mut st.cgroup_net);
                                // The cgroups' kept GPU time and TCP bytes,
                                // where the table carries them.
                                if st.procs.iter().any(|p| p.net.is_some() || p.gpu.is_some()) {
                                    st.cgroup_totals
                                        .update(&st.procs, Some(&st.cgroups.cgroups));
                                }
                                reads.procs_cost_ns += t0.elapsed().as_nanos() as u64;
                                reads.cpu_ns[i] += sys::thread_cpu_ns().saturating_sub(cpu);
                            } else {
                                st.cgroup_net.clear();
                                st.cgroup_totals = Default::default();
                            }
                            if let Some(t) = &self.table {
                                let (n, first) = t.unreadable();
                                // Said once, with the first file that failed.
                                if n > 0 && st.procs_unreadable == 0 {
                                    log(format!(
                                        "process table: {n} processes left out, their files could not be read (counted in quietstat_process_unreadable_total); first: {}",
                                        first.unwrap_or("?")
                                    ));
                                }
                                st.procs_unreadable = n;
                            }
                        }
                        Err(e) => st.procs_status = SourceStatus::Failed(e.to_string()),
                    }
                    st.exits.captured += self.exits_buf.len() as u64;
                    std::mem::swap(&mut st.exits.last, &mut self.exits_buf);
                    sys::trim_capacity(&mut st.exits.last, EXITS_KEPT);
                    // A table of a burst's processes gives its room back
                    // at the next one of ordinary size: kept up to four
                    // times the rows (at least 256), a machine of a few
                    // hundred processes held a burst's 4,096 rows for good.
                    sys::trim_capacity(&mut st.procs, 256);
                    if let Some(l) = reads.exits_lost {
                        st.exits.lost = l;
                    }
                    st.stats[i].read_ns += reads.procs_cost_ns;
                    reads.procs_cost_ns
                }
                AgentSource::Cgroups => {
                    // A walk that finished, whenever it was asked for.
                    let Some(d) = self.cgroups.as_mut().and_then(|w| w.take(&mut st.cgroups))
                    else {
                        continue;
                    };
                    reads.read_at[i] = d.read_at;
                    // Recording a walk is part of its cost: the history's
                    // writer's time on the walks it wrote since the last
                    // one committed (a walk behind: it writes at its
                    // flush), so that the source's cap holds the two.
                    let recorded = self
                        .shared
                        .store
                        .get()
                        .map_or(0, |s| s.take_cgroups_cpu_ns());
                    reads.cpu_ns[i] = d.cpu_ns + recorded;
                    *demand = (*demand & !s.bit()) | if d.demand { s.bit() } else { 0 };
                    if self.memory.caps().cgroup_depth.is_some() {
                        self.memory.stats.shed.cgroups += st.cgroups.left_out;
                    }
                    let stats = &mut st.stats[i];
                    stats.read_ns += d.cost_ns;
                    stats.skipped_lines += st.cgroups.skipped_lines;
                    d.cost_ns
                }
            };
            st.read_mono_ns[i] = reads.read_at[i];
            let stats = &mut st.stats[i];
            stats.reads += 1;
            if *demand & s.bit() != 0 {
                stats.demand_reads += 1;
            }
            stats.last_cost_ns = cost_ns;
            stats.cpu_ns += reads.cpu_ns[i];
            // The start-up read (cold caches, first opens) says little of
            // what reads will cost: the budget counts a source from the next.
            if self.started {
                stats.budget.observe(reads.cpu_ns[i]);
            }
            committed |= s.bit();
        }
        committed
    }

    /// Publishes the shared-memory snapshot when a source it carries was
    /// read; otherwise only wakes in-process consumers waiting for others.
    pub(super) fn publish(&self, st: &State, mask: Mask) {
        if SHM_SOURCES.iter().any(|s| mask & s.bit() != 0) {
            let snap =
                shm::Snapshot::from_sample(&st.sample, st.read_mono_ns[Source::Stat as usize]);
            self.shared.shm.publish(&snap);
        } else {
            self.shared.shm.notify();
        }
    }
}

/// What one wakeup read from the kernel, before it is committed.
pub(super) struct Reads {
    /// CLOCK_MONOTONIC ns when each source read began.
    pub(super) read_at: [u64; SOURCE_COUNT],
    /// The process table's result, when it was read.
    pub(super) procs: Option<proctable::Result<()>>,
    pub(super) procs_cost_ns: u64,
    /// CPU time of this thread in each source's read and parse (the
    /// process table's: its snapshot), what the overhead budget counts.
    pub(super) cpu_ns: [u64; SOURCE_COUNT],
    /// Exit records lost so far, when the process table was read.
    pub(super) exits_lost: Option<u64>,
}
