//! The media application's streams (docs/models/media.md): messages of a size sent at a
//! fixed interval over TCP or UDP, each stream its own connection or datagram flow.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{positive, Plan};
use crate::error::PlanError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    Tcp,
    Udp,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Udp => "udp",
        }
    }
}

/// One stream of a media application: a message every `interval_ns`, from `start_ns` on.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StreamPlan {
    pub name: String,
    pub transport: Transport,
    pub interval_ns: u64,
    /// Each message's size, or the smallest when `max_message_size` is given.
    pub message_size: u64,
    /// Message sizes drawn uniformly from message_size..=max_message_size.
    #[serde(deserialize_with = "super::written")]
    pub max_message_size: Option<u64>,
    pub start_ns: u64,
    /// TCP: a message that falls due while the last one is not all in the send buffer is
    /// dropped by the application (a real-time sender skips a frame), not queued behind it.
    pub skip_when_blocked: bool,
}

/// The largest UDP payload (RFC 768: a 16-bit length counting the 8-byte header; IPv4's own
/// 16-bit total length leaves 65535 − 20 − 8).
pub const MAX_UDP_MESSAGE: u64 = 65_507;

impl StreamPlan {
    fn validate(&self, at: &str) -> Result<(), PlanError> {
        if self.name.is_empty() {
            return Err(PlanError::field(format!("{at}.name"), "must not be empty"));
        }
        positive(&format!("{at}.interval_ns"), self.interval_ns)?;
        positive(&format!("{at}.message_size"), self.message_size)?;
        if let Some(max) = self.max_message_size {
            if max < self.message_size {
                return Err(PlanError::field(
                    format!("{at}.max_message_size"),
                    format!("{max} is below message_size {}", self.message_size),
                ));
            }
        }
        if self.skip_when_blocked && self.transport == Transport::Udp {
            return Err(PlanError::field(
                format!("{at}.skip_when_blocked"),
                "only a TCP stream's writes can block",
            ));
        }
        let largest = self.max_message_size.unwrap_or(self.message_size);
        if self.transport == Transport::Udp && largest > MAX_UDP_MESSAGE {
            return Err(PlanError::field(
                format!("{at}.message_size"),
                format!(
                    "a UDP message is one datagram of at most {MAX_UDP_MESSAGE} bytes; \
                     {largest} given"
                ),
            ));
        }
        Ok(())
    }
}

/// Checks a media app's streams: at least one, names distinct.
pub(super) fn validate_streams(streams: &[StreamPlan], at: &str) -> Result<(), PlanError> {
    if streams.is_empty() {
        return Err(PlanError::field(
            format!("{at}.streams"),
            "a media app needs at least one stream",
        ));
    }
    for (i, stream) in streams.iter().enumerate() {
        let here = format!("{at}.streams.{i}");
        stream.validate(&here)?;
        if streams[..i].iter().any(|s| s.name == stream.name) {
            return Err(PlanError::field(
                format!("{here}.name"),
                format!("stream name {:?} is used twice", stream.name),
            ));
        }
    }
    Ok(())
}

/// Packet captures write TCP segments only, so a plan whose streams send UDP cannot have
/// them (rather than captures that silently miss the datagrams).
pub(super) fn refuse_udp_captures(plan: &Plan) -> Result<(), PlanError> {
    let captures = plan.trace.as_ref().is_some_and(|t| !t.pcap.is_empty());
    let udp = plan
        .flows
        .iter()
        .flat_map(|f| &f.app.streams)
        .any(|s| s.transport == Transport::Udp);
    if captures && udp {
        return Err(PlanError::field(
            "trace.pcap",
            "packet captures record TCP segments only; this plan has UDP media streams",
        ));
    }
    Ok(())
}
