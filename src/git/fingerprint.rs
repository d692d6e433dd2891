//! Content fingerprints of a working tree, used to prove that nothing was lost.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::error::{GitError, io_err};
use super::repo::{Repo, lossy, metadata_if_present, not_ignored_raw, raw_path};

/// Path -> sha256 hex of git mode and content, for every tracked and untracked-not-ignored
/// file present in the working tree of the repository containing `root`.
///
/// The mode is git's view (`100644`, `100755` or `120000` with the link target as content),
/// so a lost executable bit or a file turned into a link changes the fingerprint. Tracked
/// files missing from disk are absent from the map.
pub fn tree_fingerprint(root: &Path) -> Result<BTreeMap<String, String>, GitError> {
    let repo = Repo::open(root)?;
    let git = repo.git()?;
    let mut fingerprint = BTreeMap::new();
    for path in not_ignored_raw(&git)? {
        let abs = repo.root.join(raw_path(&path));
        let Some(meta) = metadata_if_present(&abs)? else {
            continue;
        };
        let mut hasher = Sha256::new();
        if meta.file_type().is_symlink() {
            let target =
                fs::read_link(&abs).map_err(io_err(format!("read link {}", abs.display())))?;
            hasher.update(b"120000 ");
            hasher.update(target.as_os_str().as_bytes());
        } else if meta.is_file() {
            let executable = meta.permissions().mode() & 0o100 != 0;
            hasher.update(if executable { b"100755 " } else { b"100644 " });
            hasher.update(fs::read(&abs).map_err(io_err(format!("read {}", abs.display())))?);
        } else {
            continue;
        }
        let digest = hasher.finalize();
        let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
        fingerprint.insert(lossy(&path), hex);
    }
    Ok(fingerprint)
}
