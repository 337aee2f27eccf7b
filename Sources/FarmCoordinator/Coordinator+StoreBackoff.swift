import FarmCore
import FarmRuntime
import FarmStore

/// While the store refuses writes (disk full, locked): hold what was accepted, pause dispatch, try again each second.
extension Coordinator {
    func storeFailed(_ error: Error, assignments: [(QueuedPage, WorkerState)]) {
        // Leases were rolled back: the pages are still queued and the workers keep their credit.
        for (_, worker) in assignments { worker.credit += 1 }
        ready.removeAll()
        readyHead = 0
        counters.storeErrors += 1
        let now = time.monotonicMilliseconds
        if storeBlockedUntil == 0 { storeRefusedSince = now }
        let diskFull = (error as? StoreError)?.isDiskFull ?? false
        let free = store.diskSpace.map { Format.bytes(Int($0.available)) } ?? "unknown"
        if diskFull && (!counters.diskFull || now - lastDiskFullLog >= 60_000) {
            // Once when it happens, then a reminder a minute while it lasts.
            Log.error(counters.diskFull ? "the store's disk is still full: dispatch stays paused"
                          : "the store's disk is full: dispatch paused, accepted results are kept in memory until space returns",
                      ["store": store.path, "free": free, "results_held": String(heldResults),
                       "pending_writes": String(pending.count), "paused_s": String((now - storeRefusedSince) / 1000)])
            lastDiskFullLog = now
        } else if !diskFull && (counters.storeErrors <= 10 || counters.storeErrors % 100 == 0) {
            Log.error("store write failed; will retry", ["error": "\(error)", "pending_writes": String(pending.count)])
        }
        counters.diskFull = diskFull
        storeBlockedUntil = now + 1000
        publish()
    }

    /// A write went through: if the store had been refusing writes, dispatch resumes.
    func storeAccepts(written: (writes: Int, results: Int)) {
        guard storeBlockedUntil > 0 else { return }
        Log.info("the store accepts writes again; dispatch resumes",
                 ["store": store.path, "results_written": String(written.results), "pending_written": String(written.writes),
                  "paused_s": String((time.monotonicMilliseconds - storeRefusedSince) / 1000)])
        counters.diskFull = false
        storeBlockedUntil = 0
    }

    /// Results and failures accepted from workers and not yet in the store.
    var heldResults: Int {
        pending.reduce(0) { count, write in
            switch write {
            case .result, .failure: count + 1
            default: count
            }
        }
    }
}
