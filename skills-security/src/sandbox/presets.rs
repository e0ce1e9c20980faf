//! The configurations of seed 000 section 1.5 (`SANDBOX_BY_TRUST`) and seed 003's strict
//! preset.
//!
//! Seed 000's flags are enforced, not only recorded: `network_enabled` decides the network
//! namespace and the socket filter; `can_read_files` whether the skill directory is readable
//! beyond the script itself; `can_write_files` whether the scratch directory is writable;
//! `can_execute_code` whether the script may execute programs other than its interpreter.

use std::time::Duration;

use super::{Network, SandboxConfig};
use crate::trust::TrustLevel;

/// Largest script accepted by default (seed 003: 1 MB).
pub const MAX_SCRIPT_BYTES: u64 = 1024 * 1024;

/// One row of seed 000's `SANDBOX_BY_TRUST`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrustDefaults {
    /// The level.
    pub level: TrustLevel,
    /// `timeout_seconds`.
    pub timeout_seconds: u64,
    /// `memory_limit_mb`.
    pub memory_limit_mb: u64,
    /// `network_enabled` (with `allowed_domains = ["*"]` for core).
    pub network_enabled: bool,
    /// `can_read_files`.
    pub can_read_files: bool,
    /// `can_write_files`.
    pub can_write_files: bool,
    /// `can_execute_code`.
    pub can_execute_code: bool,
    /// `can_make_api_calls`.
    pub can_make_api_calls: bool,
}

/// Seed 000's table, row by row.
pub const SANDBOX_BY_TRUST: [TrustDefaults; 4] = [
    TrustDefaults {
        level: TrustLevel::Core,
        timeout_seconds: 120,
        memory_limit_mb: 1024,
        network_enabled: true,
        can_read_files: true,
        can_write_files: true,
        can_execute_code: true,
        can_make_api_calls: true,
    },
    TrustDefaults {
        level: TrustLevel::Verified,
        timeout_seconds: 60,
        memory_limit_mb: 512,
        network_enabled: false,
        can_read_files: true,
        can_write_files: true,
        can_execute_code: false,
        can_make_api_calls: false,
    },
    TrustDefaults {
        level: TrustLevel::Community,
        timeout_seconds: 30,
        memory_limit_mb: 256,
        network_enabled: false,
        can_read_files: false,
        can_write_files: false,
        can_execute_code: false,
        can_make_api_calls: false,
    },
    TrustDefaults {
        level: TrustLevel::User,
        timeout_seconds: 60,
        memory_limit_mb: 512,
        network_enabled: false,
        can_read_files: true,
        can_write_files: true,
        can_execute_code: false,
        can_make_api_calls: false,
    },
];

const MB: u64 = 1024 * 1024;

/// Tasks a run may have by default: enough for a worker pool of 500 threads.
pub const DEFAULT_MAX_TASKS: u64 = 512;

impl SandboxConfig {
    /// Seed 000's defaults for `level`. CPU time equals the wall timeout (the seed sets no
    /// separate CPU budget); files up to 64 MB; a scratch tmpfs of half the memory limit;
    /// 1 MiB of output per stream; 512 tasks (processes and threads: ordinary worker pools
    /// fit); 256 open files.
    pub fn for_trust(level: TrustLevel) -> SandboxConfig {
        let row = SANDBOX_BY_TRUST
            .iter()
            .find(|r| r.level == level)
            .copied()
            .unwrap_or(SANDBOX_BY_TRUST[2]);
        SandboxConfig {
            timeout: Duration::from_secs(row.timeout_seconds),
            memory_bytes: row.memory_limit_mb * MB,
            cpu_time: Duration::from_secs(row.timeout_seconds),
            cpu_limit_percent: 50,
            network: if row.network_enabled {
                Network::Allowed(vec!["*".to_owned()])
            } else {
                Network::Disabled
            },
            can_read_files: row.can_read_files,
            can_write_files: row.can_write_files,
            can_execute_code: row.can_execute_code,
            can_make_api_calls: row.can_make_api_calls,
            max_script_bytes: MAX_SCRIPT_BYTES,
            max_file_bytes: 64 * MB,
            max_scratch_bytes: row.memory_limit_mb * MB / 2,
            max_output_bytes: 1024 * 1024,
            max_tasks: DEFAULT_MAX_TASKS,
            max_open_files: 256,
            observe: false,
        }
    }

    /// Seed 003's strict preset: 64 MB memory, 500 ms CPU, 5 s wall, 1 MB script; no
    /// network, no files beyond the script, no writes, no other programs; 8 MB files and
    /// scratch, 256 KiB of output per stream, 512 tasks.
    pub fn strict() -> SandboxConfig {
        SandboxConfig {
            timeout: Duration::from_secs(5),
            memory_bytes: 64 * MB,
            cpu_time: Duration::from_millis(500),
            cpu_limit_percent: 100,
            network: Network::Disabled,
            can_read_files: false,
            can_write_files: false,
            can_execute_code: false,
            can_make_api_calls: false,
            max_script_bytes: MAX_SCRIPT_BYTES,
            max_file_bytes: 8 * MB,
            max_scratch_bytes: 8 * MB,
            max_output_bytes: 256 * 1024,
            max_tasks: DEFAULT_MAX_TASKS,
            max_open_files: 64,
            observe: false,
        }
    }

    /// Sets the wall-clock limit (and lowers the CPU limit to it when it was higher).
    pub fn with_timeout(mut self, timeout: Duration) -> SandboxConfig {
        self.timeout = timeout;
        if self.cpu_time > timeout {
            self.cpu_time = timeout;
        }
        self
    }

    /// Sets the CPU limit.
    pub fn with_cpu_time(mut self, cpu_time: Duration) -> SandboxConfig {
        self.cpu_time = cpu_time;
        self
    }

    /// Sets the memory limit.
    pub fn with_memory_bytes(mut self, bytes: u64) -> SandboxConfig {
        self.memory_bytes = bytes;
        self
    }

    /// Sets the per-stream output cap.
    pub fn with_max_output_bytes(mut self, bytes: usize) -> SandboxConfig {
        self.max_output_bytes = bytes;
        self
    }

    /// Sets the task limit (processes and threads).
    pub fn with_max_tasks(mut self, tasks: u64) -> SandboxConfig {
        self.max_tasks = tasks;
        self
    }

    /// Sets the scratch tmpfs's size.
    pub fn with_max_scratch_bytes(mut self, bytes: u64) -> SandboxConfig {
        self.max_scratch_bytes = bytes;
        self
    }

    /// Sets the file-size limit.
    pub fn with_max_file_bytes(mut self, bytes: u64) -> SandboxConfig {
        self.max_file_bytes = bytes;
        self
    }

    /// Sets the network access.
    pub fn with_network(mut self, network: Network) -> SandboxConfig {
        self.network = network;
        self
    }

    /// Turns observation (detonation) on or off; see [`observe`](SandboxConfig::observe).
    pub fn with_observation(mut self, observe: bool) -> SandboxConfig {
        self.observe = observe;
        self
    }

    /// Detonation's preset: 5 s wall and CPU, 256 MiB, the network cut (and observed),
    /// the skill readable, scratch writable, other programs allowed to start (and
    /// observed), observation on. Landlock, the namespaces and the deny-list hold as for
    /// any run: programs still cannot execute from scratch, nothing reaches the network.
    pub fn detonation() -> SandboxConfig {
        SandboxConfig::for_trust(TrustLevel::User)
            .with_permissions(true, true, true)
            .with_timeout(Duration::from_secs(5))
            .with_memory_bytes(256 * MB)
            .with_max_scratch_bytes(64 * MB)
            .with_max_output_bytes(256 * 1024)
            .with_observation(true)
    }

    /// Sets seed 000's file and execution flags.
    pub fn with_permissions(
        mut self,
        can_read_files: bool,
        can_write_files: bool,
        can_execute_code: bool,
    ) -> SandboxConfig {
        self.can_read_files = can_read_files;
        self.can_write_files = can_write_files;
        self.can_execute_code = can_execute_code;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_table_is_followed() {
        let core = SandboxConfig::for_trust(TrustLevel::Core);
        assert_eq!(core.timeout, Duration::from_secs(120));
        assert_eq!(core.memory_bytes, 1024 * MB);
        assert_eq!(core.network, Network::Allowed(vec!["*".into()]));
        assert!(core.can_execute_code);
        let community = SandboxConfig::for_trust(TrustLevel::Community);
        assert_eq!(community.timeout, Duration::from_secs(30));
        assert_eq!(community.memory_bytes, 256 * MB);
        assert_eq!(community.network, Network::Disabled);
        assert!(!community.can_read_files && !community.can_write_files);
        for level in [TrustLevel::Verified, TrustLevel::User] {
            let c = SandboxConfig::for_trust(level);
            assert_eq!(c.timeout, Duration::from_secs(60));
            assert_eq!(c.memory_bytes, 512 * MB);
            assert!(c.can_read_files && c.can_write_files && !c.can_execute_code);
            assert_eq!(c.network, Network::Disabled);
        }
    }

    #[test]
    fn strict_is_seed_003() {
        let s = SandboxConfig::strict();
        assert_eq!(s.memory_bytes, 64 * MB);
        assert_eq!(s.cpu_time, Duration::from_millis(500));
        assert_eq!(s.timeout, Duration::from_secs(5));
        assert_eq!(s.max_script_bytes, 1024 * 1024);
    }
}
