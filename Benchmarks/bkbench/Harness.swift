import BlocksBridge

/// A benchmark: our code and its reference, run alternately in one process, compared by ratio.
struct Benchmark {
    let name: String
    /// The ratio (ours / reference) the issue asks for; nil when there is none.
    let target: Double?
    /// Runs one round of our side, then one of the reference; returns their times in seconds.
    let ours: () throws -> Double
    let reference: () throws -> Double
    /// Extra lines to print after the ratio (memory, latency percentiles, ...).
    var report: (() throws -> [String])? = nil
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    let elapsed = try clock.measure(body)
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

func format(_ value: Double, _ digits: Int = 3) -> String {
    var text = String(value)
    if let dot = text.firstIndex(of: ".") {
        let end = text.index(dot, offsetBy: digits + 1, limitedBy: text.endIndex) ?? text.endIndex
        text = String(text[..<end])
    }
    return text
}

/// Runs each benchmark `rounds` times, alternating sides, and prints median times and the ratio.
func runBenchmarks(_ benchmarks: [Benchmark], rounds: Int, filter: String?) throws {
    print("benchmark".padding(44) + "ours (s)".padding(11) + "ref (s)".padding(11) + "ratio".padding(8) + "target")
    for benchmark in benchmarks where filter.map({ benchmark.name.contains($0) }) ?? true {
        var ours: [Double] = []
        var reference: [Double] = []
        for _ in 0 ..< rounds {
            ours.append(try benchmark.ours())
            reference.append(try benchmark.reference())
        }
        let ratio = median(ours) / median(reference)
        let verdict = benchmark.target.map { ratio <= $0 ? "<= \(format($0, 2)) ok" : "<= \(format($0, 2)) MISSED" } ?? "-"
        print(benchmark.name.padding(44) + format(median(ours)).padding(11) + format(median(reference)).padding(11)
              + (format(ratio, 2) + "x").padding(8) + verdict)
        for line in try benchmark.report?() ?? [] { print("    " + line) }
    }
}

extension String {
    func padding(_ width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
