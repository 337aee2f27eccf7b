import FarmRuntime
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 37: the memory limits a worker's page process reads (cgroup v2 and v1 as /proc shows them).
@Suite("memory limits")
struct MemoryLimitsTests {
    /// /proc/self/mountinfo lines of a cgroup v2 host (systemd) and of a v1 host with a memory controller.
    static let v2Mounts = """
        24 30 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
        30 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
        """
    static let v1Mounts = """
        31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
        35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
        41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
        """

    @Test("cgroup v2: the lowest memory.max from the process's cgroup up to the root, with that cgroup's use")
    func cgroupV2() {
        let files = ["/sys/fs/cgroup/system.slice/ocrfarm-worker.service/memory.max": "max\n",
                     "/sys/fs/cgroup/system.slice/ocrfarm-worker.service/memory.current": "1000\n",
                     "/sys/fs/cgroup/system.slice/memory.max": "805306368\n",
                     "/sys/fs/cgroup/system.slice/memory.current": "200000000\n"]
        let found = MemoryLimits.cgroupLimit(cgroups: "0::/system.slice/ocrfarm-worker.service\n", mounts: Self.v2Mounts) { files[$0] }
        #expect(found?.limit == 805_306_368 && found?.used == 200_000_000 && found?.path == "/sys/fs/cgroup/system.slice")
        #expect(MemoryLimits.cgroupLimit(cgroups: "0::/system.slice/ocrfarm-worker.service\n", mounts: Self.v2Mounts) { _ in "max\n" } == nil)
    }

    @Test("cgroup v1: the memory controller's limit_in_bytes; its 'no limit' (about 2^63) is none")
    func cgroupV1() {
        let cgroups = "9:name=systemd:/\n4:memory:/process_api/abc\n0::/\n"
        let files = ["/sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes": "536870912\n",
                     "/sys/fs/cgroup/memory/process_api/abc/memory.usage_in_bytes": "123456\n"]
        let found = MemoryLimits.cgroupLimit(cgroups: cgroups, mounts: Self.v1Mounts) { files[$0] }
        #expect(found?.limit == 536_870_912 && found?.used == 123_456)
        // The v2 hierarchy beside it has no memory controller here: no memory.max.
        #expect(MemoryLimits.cgroupLimit(cgroups: cgroups, mounts: Self.v1Mounts) { path in
            path.hasSuffix("_in_bytes") ? "9223372036854771712\n" : nil
        } == nil)
    }

    @Test("this process: its address-space limit as getrlimit says, its address space in use, and the room left")
    func current() {
        var limit = rlimit()
        #expect(getrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &limit) == 0)
        let limits = MemoryLimits.current()
        #expect(limits.addressSpace == (limit.rlim_cur == rlim_t.max ? nil : Int(limit.rlim_cur)))
        #expect(limits.addressSpaceUsed > 1 << 20)
        let room = MemoryLimits(addressSpace: 300 << 20, addressSpaceUsed: 100 << 20, cgroup: 1 << 30, cgroupUsed: 424 << 20)
        #expect(room.room(cgroupShares: 1) == 200 << 20)
        #expect(room.room(cgroupShares: 4) == 150 << 20)
        #expect(MemoryLimits().room() == nil)
    }
}
