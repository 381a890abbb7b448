//! Whether a folder is on a network file system, where SQLite's file locks are not to be trusted
//! with concurrent writers (and WAL's shared memory does not work at all): `statfs`'s `f_type`.

use std::path::Path;

/// File systems whose locking is unsafe for concurrent SQLite writers, by `statfs` magic number.
const NETWORK: [(u64, &str); 12] = [
    (0x6969, "NFS"),
    (0x517B, "SMB"),
    (0xFF53_4D42, "CIFS"),
    (0xFE53_4D42, "SMB2"),
    (0x00C3_6400, "CephFS"),
    (0x0BD0_0BD0, "Lustre"),
    (0x4750_4653, "GPFS"),
    (0x5346_414F, "AFS"),
    (0x7375_7245, "Coda"),
    (0x0102_1997, "9P"),
    (0x0116_1970, "GFS2"),
    (0x6573_5546, "FUSE (sshfs and other network mounts)"),
];

/// The name of the network file system holding `dir`, or `None` for a local one (or when it
/// cannot be told).
pub fn network_fs(dir: &Path) -> Option<&'static str> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
        // SAFETY: statfs is plain data; the call fills it from a NUL-terminated path.
        let mut s: libc::statfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statfs(c.as_ptr(), &mut s) } != 0 {
            return None;
        }
        #[allow(clippy::unnecessary_cast)]
        let magic = (s.f_type as u64) & 0xFFFF_FFFF;
        NETWORK.iter().find(|(m, _)| *m == magic).map(|(_, name)| *name)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = dir;
        None
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_local_temporary_folder_is_not_a_network_file_system() {
        assert_eq!(super::network_fs(&std::env::temp_dir()), None);
    }
}
