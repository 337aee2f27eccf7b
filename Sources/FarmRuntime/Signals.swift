#if canImport(Glibc)
import Glibc
#endif
import Synchronization

private let shutdownSignal = Atomic<Int32>(0)

/// Process signals that ask for a graceful shutdown (SIGTERM, SIGINT). The handler only records the signal;
/// poll loops check `Shutdown.requested` between waits, which signals also interrupt.
public enum Shutdown {
    /// Installs the handlers (idempotent). SIGPIPE is ignored so a dead peer is an error, not a crash.
    public static func install() {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { signal in shutdownSignal.store(signal, ordering: .relaxed) }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0  // no SA_RESTART: blocking calls return EINTR so loops notice at once
        sigaction(SIGTERM, &action, nil)
        sigaction(SIGINT, &action, nil)
        signal(SIGPIPE, SIG_IGN)
        // A parent may have started us with these blocked (the mask is inherited); a blocked SIGTERM would leave a
        // supervisor waiting for its grace period and then killing us.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGTERM)
        sigaddset(&unblock, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
    }

    /// The signal that asked for shutdown, or nil.
    public static var requested: Int32? {
        let value = shutdownSignal.load(ordering: .relaxed)
        return value == 0 ? nil : value
    }

    /// Asks for shutdown from inside the process (tests, embedded runs).
    public static func request(_ signal: Int32 = SIGTERM) { shutdownSignal.store(signal, ordering: .relaxed) }

    public static func reset() { shutdownSignal.store(0, ordering: .relaxed) }
}
