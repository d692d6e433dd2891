//! efix's own files (artifacts, checkpoints, and whatever else efix writes inside a
//! repository) opened without following symbolic links, so that a repository cannot redirect
//! them: a committed `efix-artifacts -> /somewhere` link, or one a command plants mid-run,
//! makes efix refuse instead of writing outside the repository.
//!
//! A directory is reached from a trusted base (the repository root the user named) one
//! component at a time with `O_NOFOLLOW | O_DIRECTORY`, and files are created beside their
//! final name and renamed over it, which replaces a planted link instead of following it.
//! Paths outside the base are the user's own choice and are opened as given.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, openat, renameat};
use nix::sys::stat::{Mode, mkdirat};
use nix::unistd::{UnlinkatFlags, unlinkat};

/// Permission bits of files efix creates (rw-r--r--).
const FILE_MODE: u32 = 0o644;

/// Permission bits of directories efix creates (rwxr-xr-x).
const DIR_MODE: u32 = 0o755;

/// A directory opened without following links below its trusted base.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

/// Why a path cannot be used: it is (or passes through) a symbolic link or something that is
/// not a directory, or the OS refused.
#[derive(Debug, thiserror::Error)]
#[error("{}: {reason}", path.display())]
pub struct UnsafePath {
    pub path: PathBuf,
    pub reason: String,
    #[source]
    pub source: io::Error,
}

fn unsafe_path(path: &Path, errno: Errno) -> UnsafePath {
    let reason = match errno {
        Errno::ELOOP => "is a symbolic link; efix writes its own files only into real \
                         directories inside the repository"
            .to_owned(),
        Errno::ENOTDIR => "is not a directory (or passes through a symbolic link)".to_owned(),
        other => io::Error::from(other).to_string(),
    };
    UnsafePath {
        path: path.to_path_buf(),
        reason,
        source: io::Error::from(errno),
    }
}

impl Dir {
    /// Open `dir`, creating missing directories when `create`. Every component of `dir`
    /// below `base` is opened without following symbolic links; `base` itself, and a `dir`
    /// outside it, are opened as given.
    pub fn open(base: &Path, dir: &Path, create: bool) -> Result<Dir, UnsafePath> {
        let (start, below) = match dir.strip_prefix(base) {
            Ok(rest) => (base, rest),
            Err(_) => (dir, Path::new("")),
        };
        if create && !start.exists() {
            std::fs::create_dir_all(start).map_err(|source| UnsafePath {
                path: start.to_path_buf(),
                reason: format!("cannot be created: {source}"),
                source,
            })?;
        }
        let mut fd =
            open_dir(None, start.as_os_str(), false).map_err(|errno| unsafe_path(start, errno))?;
        let mut path = start.to_path_buf();
        for component in below.components() {
            let name = match component {
                Component::Normal(name) => name,
                Component::CurDir => continue,
                _ => {
                    return Err(UnsafePath {
                        path: dir.to_path_buf(),
                        reason: "climbs out of the repository".to_owned(),
                        source: io::Error::from(io::ErrorKind::InvalidInput),
                    });
                }
            };
            path.push(name);
            let next = match open_dir(Some(&fd), name, true) {
                Err(Errno::ENOENT) if create => {
                    match mkdirat(&fd, name, Mode::from_bits_truncate(DIR_MODE)) {
                        Ok(()) | Err(Errno::EEXIST) => {}
                        Err(errno) => return Err(unsafe_path(&path, errno)),
                    }
                    open_dir(Some(&fd), name, true)
                }
                other => other,
            };
            fd = next.map_err(|errno| {
                // Linux answers ENOTDIR for a link opened with O_DIRECTORY | O_NOFOLLOW; say
                // which it is.
                let link = nix::sys::stat::fstatat(&fd, name, AtFlags::AT_SYMLINK_NOFOLLOW)
                    .is_ok_and(|stat| stat.st_mode & libc::S_IFMT == libc::S_IFLNK);
                unsafe_path(&path, if link { Errno::ELOOP } else { errno })
            })?;
        }
        Ok(Dir { fd, path })
    }

    /// Whether `name` exists in the directory (a symbolic link counts, without following it).
    pub fn exists(&self, name: &str) -> bool {
        nix::sys::stat::fstatat(&self.fd, name, AtFlags::AT_SYMLINK_NOFOLLOW).is_ok()
    }

    /// Read `name`, refusing a symbolic link.
    pub fn read(&self, name: &str) -> Result<Vec<u8>, UnsafePath> {
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = openat(&self.fd, name, flags, Mode::empty())
            .map_err(|errno| unsafe_path(&self.path.join(name), errno))?;
        let mut bytes = Vec::new();
        File::from(fd)
            .read_to_end(&mut bytes)
            .map_err(|source| UnsafePath {
                path: self.path.join(name),
                reason: format!("cannot be read: {source}"),
                source,
            })?;
        Ok(bytes)
    }

    /// Write `name` through a temporary sibling and a rename, so readers never see half a
    /// file and a link planted at `name` is replaced, never followed.
    pub fn write_atomic(&self, name: &str, bytes: &[u8]) -> Result<(), UnsafePath> {
        let tmp = format!(".{name}.efix-tmp");
        let failed = |errno: Errno| unsafe_path(&self.path.join(name), errno);
        match unlinkat(&self.fd, tmp.as_str(), UnlinkatFlags::NoRemoveDir) {
            Ok(()) | Err(Errno::ENOENT) => {}
            Err(errno) => return Err(failed(errno)),
        }
        let flags =
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = openat(
            &self.fd,
            tmp.as_str(),
            flags,
            Mode::from_bits_truncate(FILE_MODE),
        )
        .map_err(failed)?;
        File::from(fd)
            .write_all(bytes)
            .map_err(|source| UnsafePath {
                path: self.path.join(name),
                reason: format!("cannot be written: {source}"),
                source,
            })?;
        renameat(&self.fd, tmp.as_str(), &self.fd, name).map_err(failed)
    }
}

fn open_dir(at: Option<&OwnedFd>, name: &OsStr, nofollow: bool) -> Result<OwnedFd, Errno> {
    let mut flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    if nofollow {
        flags |= OFlag::O_NOFOLLOW;
    }
    match at {
        Some(fd) => openat(fd, name, flags, Mode::empty()),
        None => nix::fcntl::open(name, flags, Mode::empty()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_are_created_and_files_written_and_read_back() {
        let base = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let dir = Dir::open(base.path(), &base.path().join("a/b"), true);
        let dir = dir.unwrap_or_else(|e| panic!("{e}"));
        let written = dir.write_atomic("x.json", b"{}\n");
        let read = dir.read("x.json").map_err(|e| e.to_string());
        assert_eq!((written.is_ok(), read), (true, Ok(b"{}\n".to_vec())));
    }

    #[test]
    fn a_symlinked_component_below_the_base_is_refused() {
        let base = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(outside.path(), base.path().join("efix-artifacts"))
            .unwrap_or_else(|e| panic!("{e}"));
        let refused = Dir::open(base.path(), &base.path().join("efix-artifacts"), true)
            .map(|_| ())
            .map_err(|e| e.reason);
        assert_eq!(
            (
                refused,
                std::fs::read_dir(outside.path()).map(|d| d.count()).ok()
            ),
            (
                Err(
                    "is a symbolic link; efix writes its own files only into real directories \
                     inside the repository"
                        .to_owned()
                ),
                Some(0)
            )
        );
    }

    #[test]
    fn a_planted_link_at_the_file_name_is_replaced_not_followed() {
        let base = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let target = base.path().join("victim");
        std::fs::write(&target, "keep").unwrap_or_else(|e| panic!("{e}"));
        let dir = Dir::open(base.path(), &base.path().join("out"), true)
            .unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(&target, base.path().join("out/evidence.json"))
            .unwrap_or_else(|e| panic!("{e}"));
        let read_link = dir.read("evidence.json").map(|_| ()).map_err(|e| e.reason);
        let written = dir.write_atomic("evidence.json", b"new").is_ok();
        let kind = std::fs::symlink_metadata(base.path().join("out/evidence.json"))
            .map(|m| m.file_type().is_symlink())
            .ok();
        assert_eq!(
            (
                read_link.is_err(),
                written,
                kind,
                std::fs::read_to_string(&target).ok()
            ),
            (true, true, Some(false), Some("keep".to_owned()))
        );
    }
}
