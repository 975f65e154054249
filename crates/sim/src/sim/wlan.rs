//! The simulation's side of the 802.11 media: packets entering a wlan link go to its medium,
//! and the medium's wake-ups hand back the packets it delivered.

use super::{show_on_wire, Event, Simulation};
use crate::net::PacketRef;

impl Simulation {
    pub(super) fn wlan_offer(&mut self, ch: usize, packet: PacketRef) {
        if let Some((m, at)) = self.wlan.offer(self.now, ch, packet, &mut self.packets) {
            self.events.schedule(at, Event::Wlan(m as u32));
        }
    }

    pub(super) fn wlan_due(&mut self, m: usize) {
        let (arrival, next) = self.wlan.wake(self.now, m, &mut self.packets);
        if let Some(a) = arrival {
            // A capture shows each packet once, as the attempt that delivered it started.
            let packet = self.packets.get(a.packet.id);
            show_on_wire(&mut self.taps, a.sent, a.channel, &packet);
            self.events.schedule(a.at, Event::Arrive(a.packet));
        }
        if let Some(at) = next {
            self.events.schedule(at, Event::Wlan(m as u32));
        }
    }
}
