import FarmCore

/// A page's time limit covers its whole stay in a slot, not only recognition. Recognition stops itself at the
/// limit; decoding and the correction stages cannot be interrupted, so a watchdog gives up a slot still in its page
/// `margin` after the limit: the page fails with `timeout` at once, a new slot (a new engine) takes the place of the
/// old one, whose thread ends when its stage does, its outcome thrown away. Used by workers and `LocalBatch`.
public enum PageWatchdog {
    /// Past the limit, recognition's own stop gets this long to report the timeout, cheaper than a new slot.
    public static let marginMilliseconds: Int64 = 300

    /// The failure of a page whose slot was given up after `held` milliseconds, for a limit of `limit`.
    public static func failure(heldMilliseconds held: Int64, limitMilliseconds limit: Int) -> PageFailure {
        PageFailure(stage: "page", code: .timeout,
                    message: "the page was still being read after \(held) ms, past its time limit of \(limit) ms, "
                        + "in a stage that cannot be stopped; its slot was given up", retryable: true)
    }
}
