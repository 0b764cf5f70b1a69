//! Signed history: an Ed25519 key whose private half lives outside the journal
//! signs each transition's chain head as it is appended, and signs anchors (a head
//! to keep anywhere). Someone who can write the journal file but cannot read the
//! key can no longer forge a history that verifies against the key.
//!
//! The key file is one line of 64 hex digits (the 32-byte seed), mode 0600 in a
//! 0700 directory, created on first use. What is signed is domain-separated and
//! length-prefixed: `cairn.signature.v1 | seq | hash` for a transition (the hash of
//! its last event, which chains every byte before it) and `cairn.anchor.v1 | seq |
//! hash` for an anchor.

use std::path::{Path, PathBuf};

use ed25519_dalek::{Signature, Signer as _, VerifyingKey};

use crate::Error;

/// A signing key (the private half). Its `Debug` never prints the secret.
#[derive(Clone)]
pub struct SigningKey {
    key: ed25519_dalek::SigningKey,
    path: Option<PathBuf>,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("public", &self.public_hex())
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

fn key_error(path: &Path, reason: impl Into<String>) -> Error {
    Error::SigningKey {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

impl SigningKey {
    /// A fresh key from the operating system's random source.
    pub fn generate() -> Result<Self, Error> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| Error::SigningKey {
            path: PathBuf::new(),
            reason: format!("no random source: {e}"),
        })?;
        Ok(Self {
            key: ed25519_dalek::SigningKey::from_bytes(&seed),
            path: None,
        })
    }

    /// The key from its 32-byte seed.
    pub fn from_seed(seed: [u8; 32]) -> Self {
        Self {
            key: ed25519_dalek::SigningKey::from_bytes(&seed),
            path: None,
        }
    }

    /// The public half, 64 lower-case hex digits (what the journal records).
    pub fn public_hex(&self) -> String {
        hex::encode(self.key.verifying_key().as_bytes())
    }

    /// The file it was read from, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Reads the key at `path`; a key file others can read or write is refused.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let meta = std::fs::symlink_metadata(path)
            .map_err(|source| key_error(path, source.to_string()))?;
        if !meta.is_file() {
            return Err(key_error(path, "not a regular file"));
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(key_error(
                    path,
                    format!("mode {mode:o} lets others read or write it; chmod 600 it"),
                ));
            }
        }
        let text = std::fs::read_to_string(path).map_err(|source| {
            if source.kind() == std::io::ErrorKind::InvalidData {
                key_error(
                    path,
                    "expected one line of 64 hex digits, found bytes that are not text",
                )
            } else {
                key_error(path, source.to_string())
            }
        })?;
        let seed = from_hex(text.trim())
            .and_then(|b| <[u8; 32]>::try_from(b).ok())
            .ok_or_else(|| key_error(path, "expected one line of 64 hex digits"))?;
        Ok(Self {
            key: ed25519_dalek::SigningKey::from_bytes(&seed),
            path: Some(path.to_owned()),
        })
    }

    /// Reads the key at `path`, creating it (mode 0600, its directory 0700) when
    /// missing. Racing processes end with one key: the file appears whole or not
    /// at all (written aside, then linked into place without overwriting).
    pub fn load_or_create(path: &Path) -> Result<Self, Error> {
        match std::fs::symlink_metadata(path) {
            Ok(_) => return Self::load(path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            // A path no key can be at (its parent a file, …): the setting's fault.
            Err(source) => return Err(key_error(path, source.to_string())),
        }
        let key = Self::generate()?;
        write_new_key(path, &hex::encode(key.key.as_bytes()))?;
        Self::load(path)
    }

    /// Signs a transition's chain head (the hash of its last event).
    pub fn sign_head(&self, seq: i64, hash: &str) -> String {
        hex::encode(self.key.sign(&message(HEAD_DOMAIN, seq, hash)).to_bytes())
    }

    /// Signs `head` as an anchor to keep outside the journal.
    pub fn anchor(&self, seq: i64, hash: &str) -> Anchor {
        Anchor {
            seq,
            hash: hash.to_owned(),
            public_key: self.public_hex(),
            signature: hex::encode(self.key.sign(&message(ANCHOR_DOMAIN, seq, hash)).to_bytes()),
        }
    }
}

const HEAD_DOMAIN: &str = "cairn.signature.v1";
const ANCHOR_DOMAIN: &str = "cairn.anchor.v1";

fn message(domain: &str, seq: i64, hash: &str) -> Vec<u8> {
    let mut m = Vec::with_capacity(domain.len() + hash.len() + 24);
    for part in [domain.as_bytes(), &seq.to_be_bytes(), hash.as_bytes()] {
        m.extend_from_slice(&(part.len() as u64).to_be_bytes());
        m.extend_from_slice(part);
    }
    m
}

/// True when `signature` (hex) is `public_key`'s (hex) signature of the
/// transition head `(seq, hash)`. Any malformed input is `false`.
pub fn verify_head(public_key: &str, seq: i64, hash: &str, signature: &str) -> bool {
    verify(public_key, &message(HEAD_DOMAIN, seq, hash), signature)
}

fn verify(public_key: &str, msg: &[u8], signature: &str) -> bool {
    decode_key(public_key).is_some_and(|pk| verify_with(&pk, msg, signature))
}

fn decode_key(public_key: &str) -> Option<VerifyingKey> {
    let pk = from_hex(public_key).and_then(|b| <[u8; 32]>::try_from(b).ok())?;
    VerifyingKey::from_bytes(&pk).ok()
}

fn verify_with(pk: &VerifyingKey, msg: &[u8], signature: &str) -> bool {
    let Some(sig) = from_hex(signature).and_then(|b| <[u8; 64]>::try_from(b).ok()) else {
        return false;
    };
    pk.verify_strict(msg, &Signature::from_bytes(&sig)).is_ok()
}

/// [`verify_head`] for many heads under few keys: each key is decoded (a point
/// decompression, a fifth of a check) once.
#[derive(Default)]
pub(crate) struct HeadVerifier {
    keys: std::collections::HashMap<String, Option<VerifyingKey>>,
}

impl HeadVerifier {
    pub(crate) fn holds(
        &mut self,
        public_key: &str,
        seq: i64,
        hash: &str,
        signature: &str,
    ) -> bool {
        if !self.keys.contains_key(public_key) {
            self.keys
                .insert(public_key.to_owned(), decode_key(public_key));
        }
        self.keys
            .get(public_key)
            .and_then(Option::as_ref)
            .is_some_and(|pk| verify_with(pk, &message(HEAD_DOMAIN, seq, hash), signature))
    }
}

/// A signed chain head to keep outside the journal (a bead comment, a git note):
/// `cairn-anchor-v1:SEQ:HASH:PUBLIC_KEY:SIGNATURE`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Anchor {
    /// The head's sequence number.
    pub seq: i64,
    /// The head's hash.
    pub hash: String,
    /// The signer's public key (hex).
    pub public_key: String,
    /// The signature (hex).
    pub signature: String,
}

impl Anchor {
    /// The text form.
    pub fn text(&self) -> String {
        format!(
            "cairn-anchor-v1:{}:{}:{}:{}",
            self.seq, self.hash, self.public_key, self.signature
        )
    }

    /// Parses the text form; `None` when it is not one.
    pub fn parse(text: &str) -> Option<Self> {
        let rest = text.trim().strip_prefix("cairn-anchor-v1:")?;
        let parts: Vec<&str> = rest.split(':').collect();
        let [seq, hash, public_key, signature] = parts.as_slice() else {
            return None;
        };
        let seq: i64 = seq.parse().ok().filter(|s| *s > 0)?;
        let hex64 = |s: &str, n: usize| {
            s.len() == n
                && s.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        };
        if !hex64(hash, 64) || !hex64(public_key, 64) || !hex64(signature, 128) {
            return None;
        }
        Some(Self {
            seq,
            hash: (*hash).to_owned(),
            public_key: (*public_key).to_owned(),
            signature: (*signature).to_owned(),
        })
    }

    /// True when the signature is the named key's signature of this head.
    pub fn signature_holds(&self) -> bool {
        verify(
            &self.public_key,
            &message(ANCHOR_DOMAIN, self.seq, &self.hash),
            &self.signature,
        )
    }
}

/// The default key file: `$XDG_CONFIG_HOME/cairn/signing.key`, else
/// `~/.config/cairn/signing.key`; `None` when neither variable is set.
pub fn default_key_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".config"))
        })?;
    Some(base.join("cairn").join("signing.key"))
}

/// Lower-case or upper-case hex to bytes; `None` when it is not hex.
pub(crate) fn from_hex(s: &str) -> Option<Vec<u8>> {
    hex::decode(s).ok()
}

#[cfg(unix)]
fn write_new_key(path: &Path, hex: &str) -> Result<(), Error> {
    use std::io::Write as _;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let io = |p: &Path| {
        let p = p.to_owned();
        move |source| Error::Io { path: p, source }
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io(dir))?;
    }
    let mut nonce = [0u8; 8];
    let _ = getrandom::fill(&mut nonce);
    let aside = dir.join(format!(
        ".signing.key.{}.{}",
        std::process::id(),
        hex::encode(nonce)
    ));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&aside)
        .map_err(io(&aside))?;
    let written = f
        .write_all(format!("{hex}\n").as_bytes())
        .and_then(|()| f.sync_all());
    drop(f);
    let linked = written.and_then(|()| std::fs::hard_link(&aside, path));
    let _ = std::fs::remove_file(&aside);
    match linked {
        Ok(()) => Ok(()),
        // Another process made the key first: use theirs.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(io(path)(e)),
    }
}

#[cfg(not(unix))]
fn write_new_key(path: &Path, hex: &str) -> Result<(), Error> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| Error::Io {
            path: dir.to_owned(),
            source,
        })?;
    }
    std::fs::write(path, format!("{hex}\n")).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_bind_key_domain_and_head() {
        let k = SigningKey::from_seed([7; 32]);
        let other = SigningKey::from_seed([8; 32]);
        let hash = "ab".repeat(32);
        let sig = k.sign_head(3, &hash);
        assert!(verify_head(&k.public_hex(), 3, &hash, &sig));
        assert!(!verify_head(&other.public_hex(), 3, &hash, &sig));
        assert!(!verify_head(&k.public_hex(), 4, &hash, &sig));
        assert!(!verify_head(&k.public_hex(), 3, &"cd".repeat(32), &sig));
        assert!(!verify_head(&k.public_hex(), 3, &hash, "00"));
        // An anchor's signature is not a transition's, and the other way round.
        let a = k.anchor(3, &hash);
        assert!(a.signature_holds());
        assert!(!verify_head(&k.public_hex(), 3, &hash, &a.signature));
        assert_eq!(Anchor::parse(&a.text()), Some(a.clone()));
        let mut forged = a.clone();
        forged.seq = 4;
        assert!(!forged.signature_holds());
        assert_eq!(Anchor::parse("cairn-anchor-v1:1:x:y:z"), None);
    }

    #[test]
    fn key_files_are_owner_only_and_created_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cfg").join("cairn").join("signing.key");
        let a = SigningKey::load_or_create(&path).unwrap();
        let b = SigningKey::load_or_create(&path).unwrap();
        assert_eq!(a.public_hex(), b.public_hex());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
            let dmode = std::fs::metadata(path.parent().unwrap())
                .unwrap()
                .permissions()
                .mode()
                & 0o777;
            assert_eq!(dmode, 0o700);
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            assert!(matches!(
                SigningKey::load(&path),
                Err(Error::SigningKey { .. })
            ));
        }
    }
}
