//! A closed ABR loop for steady-state tests: greedy sources, each on its own access line,
//! into one switch output port served at the link cell rate, then a trunk to the
//! destinations, which send every turned-around RM cell straight back; backward RM cells
//! pass the same switch, which applies its feedback scheme. Cells are counted, not
//! carried: no TCP, no AAL5.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::{AbrDestination, AbrSource, Feedback, RmCell, SourceParams, Tx};
use crate::engine::{Nanos, NS_PER_S};

pub struct Loop {
    pub link_cell_rate: f64,
    /// One-way delay source ↔ switch.
    pub access: Nanos,
    /// One-way delay switch ↔ destination.
    pub trunk: Nanos,
    pub sources: Vec<SourceParams>,
    pub scheme: Feedback,
}

#[derive(Clone, Copy)]
struct Cell {
    vc: u32,
    efci: bool,
    rm: Option<RmCell>,
}

enum Ev {
    Opportunity { vc: u32, generation: u64 },
    AtSwitch(Cell),
    Departure,
    AtDestination(Cell),
    BrmAtSwitch(u32, RmCell),
    BrmAtSource(u32, RmCell),
}

/// What a run measured from `warmup` to its end.
pub struct Outcome {
    /// Each source's ACR at the end.
    pub acr: Vec<f64>,
    /// Cells of each VC that left the switch port after the warm-up.
    pub delivered: Vec<u64>,
    pub mean_queue: f64,
    pub max_queue: u32,
    /// How many times the queue rose above `threshold` after the warm-up.
    pub upcrossings: u32,
    /// Fraction of the port's cell slots used after the warm-up.
    pub utilization: f64,
}

/// Events in time order, ties in the order they were scheduled.
#[derive(Default)]
struct Events {
    heap: BinaryHeap<Reverse<(Nanos, usize)>>,
    payloads: Vec<Option<Ev>>,
}

impl Events {
    fn push(&mut self, t: Nanos, ev: Ev) {
        self.heap.push(Reverse((t, self.payloads.len())));
        self.payloads.push(Some(ev));
    }

    fn pop(&mut self) -> Option<(Nanos, Ev)> {
        let Reverse((t, id)) = self.heap.pop()?;
        Some((t, self.payloads[id].take().unwrap()))
    }
}

impl Loop {
    pub fn run(mut self, until: Nanos, warmup: Nanos, threshold: u32) -> Outcome {
        let n = self.sources.len();
        let mut src: Vec<AbrSource> = self.sources.drain(..).map(AbrSource::new).collect();
        let mut dst = vec![AbrDestination::new(); n];
        let mut generation = vec![0u64; n];
        let mut queue: VecDeque<Cell> = VecDeque::new();
        let mut busy = false;
        let slot = (NS_PER_S as f64 / self.link_cell_rate).round() as Nanos;
        let mut events = Events::default();
        for vc in 0..n as u32 {
            events.push(0, Ev::Opportunity { vc, generation: 0 });
        }
        let mut out = Outcome {
            acr: Vec::new(),
            delivered: vec![0; n],
            mean_queue: 0.0,
            max_queue: 0,
            upcrossings: 0,
            utilization: 0.0,
        };
        let (mut area, mut last_t, mut busy_slots, mut above) = (0.0, warmup, 0u64, false);
        while let Some((now, ev)) = events.pop() {
            if now > until {
                break;
            }
            let q = queue.len() as u32;
            if now > warmup {
                area += f64::from(q) * (now - last_t.max(warmup)) as f64;
                last_t = now;
            }
            match ev {
                Ev::Opportunity { vc, generation: g } => {
                    let i = vc as usize;
                    if g != generation[i] {
                        continue;
                    }
                    let rm = match src[i].transmit(now, true, false) {
                        Some(Tx::Frm(rm)) | Some(Tx::OutOfRateFrm(rm)) => Some(rm),
                        _ => None,
                    };
                    let cell = Cell {
                        vc,
                        efci: false,
                        rm,
                    };
                    events.push(now + self.access, Ev::AtSwitch(cell));
                    let next = src[i].next_opportunity(now);
                    events.push(next, Ev::Opportunity { vc, generation: g });
                }
                Ev::AtSwitch(cell) => {
                    if let (Feedback::Erica(port), Some(rm)) = (&mut self.scheme, &cell.rm) {
                        port.on_frm(cell.vc, rm);
                    }
                    if let Feedback::Erica(port) = &mut self.scheme {
                        port.on_cell(now, cell.vc, q);
                    }
                    queue.push_back(cell);
                    if !busy {
                        busy = true;
                        events.push(now + slot, Ev::Departure);
                    }
                }
                Ev::Departure => {
                    let mut cell = queue.pop_front().unwrap();
                    let q = queue.len() as u32;
                    if let Feedback::Binary(sw) = &mut self.scheme {
                        match &mut cell.rm {
                            Some(rm) => sw.on_rm(q, rm),
                            None => cell.efci = sw.on_data(q),
                        }
                    }
                    if now > warmup {
                        out.delivered[cell.vc as usize] += 1;
                        busy_slots += 1;
                        out.max_queue = out.max_queue.max(q);
                        if q > threshold && !above {
                            out.upcrossings += 1;
                        }
                        above = q > threshold;
                    }
                    events.push(now + self.trunk, Ev::AtDestination(cell));
                    if queue.is_empty() {
                        busy = false;
                    } else {
                        events.push(now + slot, Ev::Departure);
                    }
                }
                Ev::AtDestination(cell) => {
                    let d = &mut dst[cell.vc as usize];
                    match cell.rm {
                        Some(rm) => {
                            d.on_frm(rm);
                            let back = d.take_brm().unwrap();
                            events.push(now + self.trunk, Ev::BrmAtSwitch(cell.vc, back));
                        }
                        None => d.on_data(cell.efci),
                    }
                }
                Ev::BrmAtSwitch(vc, mut rm) => {
                    match &mut self.scheme {
                        Feedback::Erica(port) => port.on_brm(now, vc, q, &mut rm),
                        Feedback::Binary(sw) => sw.on_rm(q, &mut rm),
                    }
                    events.push(now + self.access, Ev::BrmAtSource(vc, rm));
                }
                Ev::BrmAtSource(vc, rm) => {
                    let i = vc as usize;
                    src[i].on_brm(&rm);
                    generation[i] += 1;
                    let next = src[i].next_opportunity(now);
                    let g = generation[i];
                    events.push(next, Ev::Opportunity { vc, generation: g });
                }
            }
        }
        let span = (until - warmup) as f64;
        out.mean_queue = area / span;
        out.utilization = busy_slots as f64 * slot as f64 / span;
        out.acr = src.iter().map(AbrSource::acr).collect();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atm::abr::{BinaryFeedback, BinarySwitch, EricaParams, EricaPort};
    use crate::metrics::jain_index;

    const C: f64 = 100_000.0;
    const MS: Nanos = 1_000_000;

    fn greedy(n: usize) -> Vec<SourceParams> {
        vec![SourceParams::tm4_defaults(C); n]
    }

    fn erica_loop(n: usize, delta: f64) -> Outcome {
        let mut p = EricaParams::new(C);
        p.delta = delta;
        Loop {
            link_cell_rate: C,
            access: MS / 10,
            trunk: MS,
            sources: greedy(n),
            scheme: Feedback::Erica(Box::new(EricaPort::new(p, 0))),
        }
        .run(2000 * MS, 1000 * MS, 0)
    }

    #[test]
    fn greedy_sources_through_erica_converge_to_equal_shares_of_the_target() {
        // ERICA (Jain et al. 1996): with N greedy VCs on one port every VC gets the same
        // ER, and the load settles where z lies in [1, 1 + δ]: above, ER = max(FairShare,
        // CCR/z) pulls the rates down; below, MaxAllocPrevious holds them. So each ACR ends
        // in [U·C/N, (1 + δ)·U·C/N], the link carries between U and (1 + δ)·U of its cells,
        // and no standing queue builds.
        for n in [2usize, 5, 10] {
            let out = erica_loop(n, 0.1);
            let share = 0.9 * C / n as f64;
            for acr in &out.acr {
                assert!(
                    *acr >= share * 0.999 && *acr <= 1.1 * share,
                    "n={n}: {acr} vs {share}"
                );
            }
            let delivered: Vec<f64> = out.delivered.iter().map(|&d| d as f64).collect();
            assert!(jain_index(&delivered).unwrap() > 0.9999, "n={n}");
            assert!(out.utilization > 0.899 && out.utilization < 0.99, "n={n}");
            assert!(out.mean_queue < 2.0, "n={n}: {}", out.mean_queue);
        }
    }

    #[test]
    fn without_the_delta_band_erica_settles_on_the_target() {
        // With δ = 0 MaxAllocPrevious applies only while z ≤ 1, so each VC settles within
        // measurement noise (one cell in a 90-cell interval) of U·C/N.
        for n in [2usize, 5, 10] {
            let out = erica_loop(n, 0.0);
            let share = 0.9 * C / n as f64;
            for acr in &out.acr {
                assert!((acr / share - 1.0).abs() < 0.02, "n={n}: {acr} vs {share}");
            }
        }
    }

    fn binary_loop(n: usize, mode: BinaryFeedback, threshold: u32) -> Outcome {
        Loop {
            link_cell_rate: C,
            access: MS / 10,
            trunk: MS,
            sources: greedy(n),
            scheme: Feedback::Binary(BinarySwitch::new(mode, threshold, threshold).unwrap()),
        }
        .run(2000 * MS, 1000 * MS, threshold)
    }

    #[test]
    fn binary_feedback_sources_oscillate_around_the_threshold() {
        // Binary feedback (TM 4.0 §5.10.6 with source rule 8): sources add RIF·PCR per
        // unmarked BRM and remove ACR·RDF per marked one, so the queue never settles: it
        // keeps crossing the threshold, stays near it rather than emptying (the link stays
        // busy), and VCs that see the same marks share the link equally. Marking CI in the
        // passing BRMs reaches the sources a trunk round trip sooner than data-cell EFCI,
        // which waits for the destination's next turnaround, so its queue is shorter.
        for n in [2usize, 5, 10] {
            let efci = binary_loop(n, BinaryFeedback::Efci, 100);
            let rr = binary_loop(n, BinaryFeedback::RelativeRate, 100);
            for out in [&efci, &rr] {
                assert!(
                    out.upcrossings >= 10,
                    "n={n}: {} crossings",
                    out.upcrossings
                );
                assert!(
                    out.mean_queue > 50.0,
                    "n={n}: mean queue {}",
                    out.mean_queue
                );
                assert!(
                    out.utilization > 0.9,
                    "n={n}: utilisation {}",
                    out.utilization
                );
                let delivered: Vec<f64> = out.delivered.iter().map(|&d| d as f64).collect();
                assert!(jain_index(&delivered).unwrap() > 0.99, "n={n}");
            }
            assert!(rr.mean_queue < efci.mean_queue, "n={n}");
        }
    }
}
