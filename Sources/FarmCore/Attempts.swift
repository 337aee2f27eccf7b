/// How one attempt at a page ended, as the store's `attempts.outcome` records it (by raw value).
public enum AttemptOutcome: String, Sendable, CaseIterable {
    /// The result was recorded: the page is done.
    case done
    /// The worker reported a failure.
    case failed
    /// The worker went silent or left, or the lease ran out, while the page was in hand.
    case lost
    /// The worker handed the page back unstarted.
    case returned
    /// Not the page's current attempt when its outcome arrived (a late result or failure): ignored.
    case superseded
    /// The coordinator (or `requeue`) took the lease back from a run that is gone.
    case interrupted
    /// `ocrfarm requeue` queued the page again.
    case requeued
}

/// What kind of bytes a page's source holds, stored in `pages.source_kind` and sent in a JOB by raw value.
public enum SourceKind: String, Sendable {
    /// An image file (PNG, JPEG, TIFF…); the page index picks the page of a multi-page TIFF.
    case image
    /// A PDF; the page index picks the page to rasterize.
    case pdf
    /// A file that cannot be a page (empty, not an image, an encrypted PDF): recorded as a failed page at submit.
    case invalid
}
