/// What a profiling run recorded (`LuaState.profile(rate:_:)`, bklua's `--profile`): samples of
/// the Lua stacks taken every `1/rate` second of CPU time, as folded stacks.
public struct LuaProfile: Sendable {
    /// Samples per second of CPU time unless asked otherwise (about one per millisecond).
    public static let defaultRate = 1000

    /// Samples per second of CPU time.
    public let rate: Int
    /// Each stack seen (frames root first, joined by ";": `main;hot.lua (main chunk);hot.lua:3
    /// (spin)`), with how many samples found it.
    public let stacks: [String: Int]
    /// Samples of CPU time spent on the profiled threads outside Lua and the functions it called
    /// (the event loop's own work, the host's code): counted, not in `stacks`.
    public let samplesOutsideLua: Int

    /// A profile of these stacks (to merge or filter recorded ones).
    public init(rate: Int, stacks: [String: Int], samplesOutsideLua: Int) {
        self.rate = max(1, rate)
        self.stacks = stacks
        self.samplesOutsideLua = samplesOutsideLua
    }

    /// The samples in `stacks`.
    public var sampleCount: Int { stacks.values.reduce(0, +) }

    /// `value` with `digits` decimals (the bridge does not load Foundation).
    static func decimal(_ value: Double, digits: Int) -> String {
        var scale = 1
        for _ in 0 ..< digits { scale *= 10 }
        let scaled = Int((value * Double(scale)).rounded())
        let sign = scaled < 0 ? "-" : ""
        let whole = abs(scaled) / scale, fraction = abs(scaled) % scale
        guard digits > 0 else { return "\(sign)\(whole)" }
        let text = String(fraction)
        return "\(sign)\(whole).\(String(repeating: "0", count: digits - text.count))\(text)"
    }

}
