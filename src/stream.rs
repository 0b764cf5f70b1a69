//! Stream ids: `<machine>/<instance>`.

use std::fmt;

use crate::Error;

/// The longest stream id accepted.
pub const MAX_STREAM_LEN: usize = 200;

/// A stream id `<machine>/<instance>`: the machine segment is lower-case
/// `[a-z][a-z0-9-]*`; the instance is 1+ printable ASCII characters from
/// `[A-Za-z0-9._:@/+-]` (no spaces, no control characters).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamId(String);

impl StreamId {
    /// Parses and validates a stream id.
    pub fn parse(text: &str) -> Result<Self, Error> {
        let bad = |reason: &str| Error::InvalidStream {
            stream: text.to_owned(),
            reason: reason.to_owned(),
        };
        if text.len() > MAX_STREAM_LEN {
            return Err(bad("longer than 200 characters"));
        }
        let (machine, instance) = text
            .split_once('/')
            .ok_or_else(|| bad("expected `<machine>/<instance>`"))?;
        let mut m = machine.chars();
        if !m.next().is_some_and(|c| c.is_ascii_lowercase())
            || !m.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(bad("the machine segment must match [a-z][a-z0-9-]*"));
        }
        if instance.is_empty()
            || !instance
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._:@/+-".contains(c))
        {
            return Err(bad(
                "the instance must be 1+ characters of [A-Za-z0-9._:@/+-]",
            ));
        }
        Ok(Self(text.to_owned()))
    }

    /// Builds `<machine>/<instance>` and validates it.
    pub fn new(machine: &str, instance: &str) -> Result<Self, Error> {
        Self::parse(&format!("{machine}/{instance}"))
    }

    /// The machine segment.
    pub fn machine(&self) -> &str {
        // parse guarantees a '/'.
        self.0.split_once('/').map_or("", |(m, _)| m)
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The resource a `claim/<resource>` stream leases, when it is one an act can
    /// be fenced on: a stream id of another machine (never a claim's own), whose
    /// instance has no empty, `.` or `..` segment (`park/ep-x/`, `park//ep-x` and
    /// `park/./ep-x` are streams no verb acts on: a lease on them fences nothing).
    /// Whether the resource's machine is registered, and its instance is the
    /// spelling that machine's verbs use, is the caller's to check.
    pub fn claimed_resource(&self) -> Result<StreamId, Error> {
        let bad = |reason: &str| Error::InvalidStream {
            stream: self.0.clone(),
            reason: reason.to_owned(),
        };
        let (machine, resource) = self.0.split_once('/').ok_or_else(|| bad("no resource"))?;
        if machine != cairn_machines::reads::CLAIM_MACHINE {
            return Err(bad("it is not a claim stream"));
        }
        let resource = StreamId::parse(resource)
            .map_err(|_| bad("the claimed resource is not a stream id"))?;
        if resource.machine() == cairn_machines::reads::CLAIM_MACHINE {
            return Err(bad("a claim's own stream cannot be claimed"));
        }
        let instance = resource.0.split_once('/').map_or("", |(_, i)| i);
        if instance
            .split('/')
            .any(|seg| seg.is_empty() || seg == "." || seg == "..")
        {
            return Err(bad(
                "the claimed resource has an empty, `.` or `..` segment: no verb acts on it",
            ));
        }
        Ok(resource)
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The checks every engine entry point makes of the stream it is given.
impl StreamId {
    /// The stream is `M`'s.
    pub(crate) fn check_machine<M: cairn_machines::Machine>(&self) -> Result<(), Error> {
        if self.machine() == M::NAME {
            Ok(())
        } else {
            Err(Error::InvalidStream {
                stream: self.to_string(),
                reason: format!("it is not a `{}` stream", M::NAME),
            })
        }
    }

    /// The stream is `M`'s, and the one `command` names when it names one
    /// ([`cairn_machines::Machine::stream_of`]).
    pub(crate) fn check_command<M: cairn_machines::Machine>(
        &self,
        command: &M::Command,
    ) -> Result<(), Error> {
        self.check_machine::<M>()?;
        match M::stream_of(command) {
            Some(named) if named != self.as_str() => Err(Error::CommandStream {
                stream: self.to_string(),
                named,
            }),
            _ => Ok(()),
        }
    }

    /// `at` is a version the stream has reached (`None`: now).
    pub(crate) fn check_version(&self, at: Option<u64>, current: u64) -> Result<(), Error> {
        match at {
            Some(v) if v > current => Err(Error::NoSuchVersion {
                stream: self.to_string(),
                requested: v,
                current,
            }),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_ids() {
        let s = StreamId::parse("park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b").unwrap();
        assert_eq!(s.machine(), "park");
        assert!(StreamId::parse("work-node/spec:a/b").is_ok());
        let claimed = |s: &str| StreamId::parse(s).and_then(|s| s.claimed_resource());
        assert_eq!(
            claimed("claim/park/ep-x").map(|r| r.to_string()).ok(),
            Some("park/ep-x".into())
        );
        assert!(claimed("claim/pr-loop/github.com/o/r/pull/7").is_ok());
        for bad in [
            "claim/claim/x",
            "claim/park",
            "claim/park/ep-x/",
            "claim/park//ep-x",
            "claim/park/./ep-x",
            "claim/park/../x",
            "park/ep-x",
        ] {
            assert!(claimed(bad).is_err(), "{bad}");
        }
        for bad in [
            "park",
            "/x",
            "Park/x",
            "park/",
            "park/a b",
            "park/\u{7}",
            "1a/x",
            "park/é",
        ] {
            assert!(StreamId::parse(bad).is_err(), "{bad}");
        }
        assert!(StreamId::parse(&format!("a/{}", "x".repeat(199))).is_err());
    }
}
