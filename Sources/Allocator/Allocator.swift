import CJemalloc
#if canImport(Glibc)
import Glibc
#endif

/// The process memory allocator. ocrfarm links jemalloc, which replaces malloc for the whole process (Tesseract
/// included): with one engine per thread, glibc's allocator cost about 6% more CPU per page on clean pages
/// (`Scripts/bench/ocr`), and jemalloc hands freed memory back to the system more readily.
public enum Allocator {
    /// "jemalloc 5.3.0" when jemalloc is the allocator in force, else "glibc".
    public static var name: String {
        guard servesMalloc, let version else { return "glibc" }
        return "jemalloc \(version)"
    }

    /// True when `malloc` calls are served by jemalloc: its per-thread counter grows by what we allocate.
    public static var servesMalloc: Bool {
        guard let before = threadAllocatedBytes,
              let mallocSymbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc"),
              let freeSymbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "free")
        else { return false }
        // Called through the symbols the dynamic linker resolved (as Tesseract's calls are), which also keeps the
        // optimizer from removing the allocation.
        typealias Malloc = @convention(c) (Int) -> UnsafeMutableRawPointer?
        typealias Free = @convention(c) (UnsafeMutableRawPointer?) -> Void
        let size = 1 << 20
        let block = unsafeBitCast(mallocSymbol, to: Malloc.self)(size)
        let after = threadAllocatedBytes ?? before
        unsafeBitCast(freeSymbol, to: Free.self)(block)
        return after - before >= UInt64(size)
    }

    private static var threadAllocatedBytes: UInt64? {
        var value: UInt64 = 0
        var size = MemoryLayout<UInt64>.size
        return mallctl("thread.allocated", &value, &size, nil, 0) == 0 ? value : nil
    }

    /// jemalloc's `oversize_threshold` in force (nil when jemalloc does not answer): allocations this large or
    /// larger go to an arena that returns their pages at once; 0 turns that arena off (Sources/AllocatorSettings
    /// starts it so, unless MALLOC_CONF says otherwise).
    public static var oversizeThreshold: Int? {
        var value = 0
        var size = MemoryLayout<Int>.size
        return mallctl("opt.oversize_threshold", &value, &size, nil, 0) == 0 ? value : nil
    }

    /// jemalloc's version, from `mallctl("version")`.
    public static var version: String? {
        var pointer: UnsafePointer<CChar>?
        var size = MemoryLayout<UnsafePointer<CChar>?>.size
        guard mallctl("version", &pointer, &size, nil, 0) == 0, let pointer else { return nil }
        let full = String(cString: pointer)
        return full.split(separator: "-").first.map(String.init) ?? full
    }

    /// Bytes of memory the allocator holds in physically resident pages (nil when unknown).
    public static var residentBytes: Int? {
        // Statistics are refreshed by writing to "epoch".
        var epoch: UInt64 = 1
        _ = mallctl("epoch", nil, nil, &epoch, MemoryLayout<UInt64>.size)
        var value = 0
        var size = MemoryLayout<Int>.size
        guard mallctl("stats.resident", &value, &size, nil, 0) == 0 else { return nil }
        return value
    }

    /// Returns the unused pages of the calling thread's arena (and its thread cache) to the system: for a page
    /// slot after each page, so the next page starts from its working set without the cost of returning every
    /// freed buffer at once while the engine works (jemalloc's decay set to 0 cost about 8% of throughput in
    /// `Scripts/bench/farm`: Tesseract's buffers were faulted in afresh at every reallocation).
    public static func releaseThreadMemory() {
        _ = mallctl("thread.tcache.flush", nil, nil, nil, 0)
        var arena: UInt32 = 0
        var size = MemoryLayout<UInt32>.size
        guard mallctl("thread.arena", &arena, &size, nil, 0) == 0 else { return }
        _ = mallctl("arena.\(arena).purge", nil, nil, nil, 0)
    }

    /// Returns unused pages of every arena to the system.
    public static func releaseUnusedMemory() {
        _ = mallctl("arena.4096.purge", nil, nil, nil, 0)
    }
}
