extension LuaProfile {
    /// A function (a frame's text) with the samples in which it was running itself (the innermost
    /// frame) and in which it was on the stack at all.
    public struct FunctionSamples: Sendable, Equatable {
        public let function: String
        public let selfSamples: Int
        public let totalSamples: Int

        public init(function: String, selfSamples: Int, totalSamples: Int) {
            self.function = function
            self.selfSamples = selfSamples
            self.totalSamples = totalSamples
        }
    }

    /// The `limit` functions with the most samples of their own, most first (ties by name).
    public func hottestFunctions(_ limit: Int = 10) -> [FunctionSamples] {
        var own: [String: Int] = [:]
        var total: [String: Int] = [:]
        for (stack, count) in stacks {
            let frames = stack.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
            if let leaf = frames.last { own[leaf, default: 0] += count }
            for frame in Set(frames) { total[frame, default: 0] += count }
        }
        return own.map { FunctionSamples(function: $0.key, selfSamples: $0.value, totalSamples: total[$0.key] ?? $0.value) }
            .sorted { $0.selfSamples != $1.selfSamples ? $0.selfSamples > $1.selfSamples : $0.function < $1.function }
            .prefix(limit).map { $0 }
    }

    /// The summary bklua prints: how much was sampled, then the ten hottest functions, each with
    /// its share of the samples (its own, and with what it called).
    public var report: String {
        let count = sampleCount
        let seconds = Double(count) / Double(rate)
        var text = "profile: \(count) samples (\(LuaProfile.decimal(seconds, digits: 2)) s of CPU time in Lua"
        if samplesOutsideLua > 0 {
            text += ", \(LuaProfile.decimal(Double(samplesOutsideLua) / Double(rate), digits: 2)) s outside"
        }
        text += ") at \(rate) samples per CPU second\n"
        guard count > 0 else { return text }
        text += "   self  total  function\n"
        for entry in hottestFunctions(10) {
            let own = percent(entry.selfSamples, of: count), all = percent(entry.totalSamples, of: count)
            text += "\(own) \(all)  \(entry.function)\n"
        }
        return text
    }

    private func percent(_ part: Int, of whole: Int) -> String {
        let text = LuaProfile.decimal(100 * Double(part) / Double(whole), digits: 1) + "%"
        return String(repeating: " ", count: max(0, 6 - text.count)) + text
    }
}
