import Foundation

/// `count` scaled by `BK_TEST_SCALE` (a factor, default 1; at least 1 is returned), for the long
/// single-threaded loops: `scripts/check-sanitizers thread` runs the whole suite under
/// ThreadSanitizer, where 100,000 protected calls with tracebacks take ten minutes and find no
/// more than a few thousand do.
func scaled(_ count: Int) -> Int {
    guard let text = ProcessInfo.processInfo.environment["BK_TEST_SCALE"], let factor = Double(text),
          factor > 0 else { return count }
    return max(1, Int(Double(count) * factor))
}
