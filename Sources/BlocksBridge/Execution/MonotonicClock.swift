#if canImport(Glibc)
import Glibc
#endif

/// The loop's clock: CLOCK_MONOTONIC in nanoseconds (never jumps with the wall clock).
enum MonotonicClock {
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// Seconds as nanoseconds, clamped to [0, 10^9 s] (a longer delay is "never" in practice and
    /// must not overflow a deadline).
    static func nanoseconds(_ seconds: Double) -> UInt64 {
        guard seconds > 0 else { return 0 }
        return UInt64(min(seconds, 1e9) * 1e9)
    }
}
