import FarmCore
import FarmRuntime

/// Page events for the log, written once the store has the outcome.
extension Coordinator {
    /// The log line of a page event (nil below the log level): page, attempt, worker, source (while the attempt's
    /// label is known), and the failure's code, stage and error, or the time the attempt took. A final event forgets
    /// the attempt's label.
    func line(_ event: PageEvent) -> String? {
        guard event.level >= Log.level else {
            if event.final { labels.removeValue(forKey: event.attempt) }
            return nil
        }
        var fields = [("page", event.attempt.page.description), ("attempt", String(event.attempt.number)),
                      ("worker", event.worker.rawValue)]
        if let label = labels[event.attempt] { fields.append(("source", label)) }
        if event.final { labels.removeValue(forKey: event.attempt) }
        if let failure = event.failure {
            fields += [("code", failure.code.rawValue), ("stage", failure.stage), ("error", failure.message)]
        }
        if let duration = event.duration { fields.append(("duration_ms", String(Int((duration * 1000).rounded())))) }
        return Log.line(event.level, event.message, fields: fields)
    }
}

/// Something that happened to a page, for the log.
struct PageEvent {
    let level: Log.Level
    let message: String
    let attempt: AttemptID
    let worker: WorkerID
    var failure: PageFailure?
    /// Seconds from the lease to the outcome.
    var duration: Double?
    /// The attempt is over (done, failed, retried, given back, ignored as late): its label is no longer needed.
    var final: Bool

    init(_ level: Log.Level, _ message: String, _ attempt: AttemptID, _ worker: WorkerID, failure: PageFailure? = nil,
         duration: Double? = nil, final: Bool = true)
    {
        self.level = level
        self.message = message
        self.attempt = attempt
        self.worker = worker
        self.failure = failure
        self.duration = duration
        self.final = final
    }
}
