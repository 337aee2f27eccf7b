import FarmStore

/// `/metrics`: the status report with stage durations as histograms that only grow (`StageHistograms`), one
/// accumulator for the server's life whichever pool thread answers a scrape.
final class MetricsCounters: Sendable {
    let histograms = StageHistograms()

    func render(_ store: Store) throws -> String {
        try histograms.update(from: store)
        return try store.report().prometheus(histograms: histograms)
    }
}
