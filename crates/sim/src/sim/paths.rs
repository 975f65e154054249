//! The connections' routes as one flat table, for the two lookups every packet makes at
//! every hop (which channel next, or which host at the end). A route read through its
//! connection's `Flow` costs three dependent loads into a record of kilobytes per
//! connection; with a thousand connections those miss the caches at every hop, while this
//! table takes a few bytes per hop.

use crate::flow::Flow;

/// Where one route's channels are in `Paths::channels`, and the host it ends at.
#[derive(Clone, Copy)]
pub(super) struct Path {
    first: u32,
    pub(super) hops: u32,
    pub(super) end_host: u32,
}

pub(super) struct Paths {
    /// Per connection, its route from side 0 to side 1 and back.
    paths: Vec<[Path; 2]>,
    channels: Vec<u32>,
}

impl Paths {
    pub(super) fn new(flows: &[Flow]) -> Self {
        let mut channels = Vec::new();
        let paths = flows
            .iter()
            .map(|f| {
                [0, 1].map(|route| {
                    let first = u32::try_from(channels.len()).expect("fewer than 2^32 hops");
                    channels.extend(f.routes[route].iter().map(|&ch| ch as u32));
                    Path {
                        first,
                        hops: f.routes[route].len() as u32,
                        end_host: f.sides[1 - route].host as u32,
                    }
                })
            })
            .collect();
        Self { paths, channels }
    }

    pub(super) fn get(&self, flow: usize, route: usize) -> Path {
        self.paths[flow][route]
    }

    /// The channel at hop `hop` of connection `flow`'s route `route`.
    pub(super) fn channel(&self, flow: usize, route: usize, hop: usize) -> usize {
        let path = self.paths[flow][route];
        debug_assert!(hop < path.hops as usize);
        self.channels[path.first as usize + hop] as usize
    }
}
