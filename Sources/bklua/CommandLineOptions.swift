/// `bklua`'s command line, parsed exactly as lua.c's `collectargs` does.
struct CommandLineOptions {
    var interactive = false   // -i
    var version = false       // -v (also implied by -i)
    var executes = false      // -e seen
    var ignoreEnvironment = false  // -E
    var help = false          // --help (not a lua.c option: only as the first argument)
    var annotations = false   // --annotations (likewise)
    /// Index in `argv` of the script (argv.count when there is none).
    var scriptIndex: Int
    /// Index in `argv` of the bad option, when parsing failed.
    var badOption: Int?
    /// bklua's own sandbox options (`--sandbox`, `--memory-limit BYTES`, `--instruction-limit N`,
    /// `--time-limit SECONDS`); they may appear anywhere among the interpreter options.
    var sandbox = false
    var memoryLimit = 0
    var instructionLimit = 0
    var timeLimit = 0.0
    /// Indices in `argv` of those options and their values (skipped when running -e/-l/-W).
    var sandboxArguments: Set<Int> = []
    /// `--profile[=FILE]`: the file the profile goes to (nil: not profiling); `--profile-rate=N`.
    var profileFile: String?
    var profileRate = 1000  // LuaProfile.defaultRate
    /// Index in `argv` of the last `--profile-rate=N` (it needs `--profile`).
    var profileRateIndex: Int?
    /// A `--profile-rate=N` without `--profile`, whose index it is: refused (it would do nothing).
    var rateWithoutProfile: Int? { profileFile == nil ? profileRateIndex : nil }

    /// Parses `argv` (argv[0] is the program name).
    init(_ argv: [String]) {
        argumentCount = argv.count
        scriptIndex = argv.count
        var i = 1
        while i < argv.count {
            scriptIndex = i
            let arg = Array(argv[i].utf8)
            guard arg.first == UInt8(ascii: "-") else { return }  // not an option: the script
            let option = arg.count > 1 ? arg[1] : 0
            let hasExtra = arg.count > 2
            switch option {
            case UInt8(ascii: "-"):
                if i == 1, argv[i] == "--help" { help = true; return }
                if i == 1, argv[i] == "--annotations" { annotations = true; return }
                if hasExtra {
                    guard parseSandboxOption(argv, at: &i) else { badOption = i; return }
                    i += 1
                    continue
                }
                scriptIndex = i + 1
                return
            case 0:
                return  // "-": the script is stdin
            case UInt8(ascii: "E"):
                if hasExtra { badOption = i; return }
                ignoreEnvironment = true
            case UInt8(ascii: "W"):
                if hasExtra { badOption = i; return }
            case UInt8(ascii: "i"), UInt8(ascii: "v"):
                if hasExtra { badOption = i; return }
                if option == UInt8(ascii: "i") { interactive = true }
                version = true
            case UInt8(ascii: "e"), UInt8(ascii: "l"):
                if option == UInt8(ascii: "e") { executes = true }
                if !hasExtra {
                    i += 1
                    if i >= argv.count || argv[i].hasPrefix("-") { badOption = i - 1; return }
                }
            default:
                badOption = i
                return
            }
            i += 1
        }
        scriptIndex = argv.count
    }

    /// Parses the long option at `i` (and its value, advancing `i`); false when it is unknown or
    /// its value is missing or not a non-negative number.
    mutating func parseSandboxOption(_ argv: [String], at i: inout Int) -> Bool {
        let name = argv[i]
        if name == "--profile" || name.hasPrefix("--profile=") || name.hasPrefix("--profile-rate=") {
            guard parseProfileOption(name) else { return false }
            if name.hasPrefix("--profile-rate=") { profileRateIndex = i }
            sandboxArguments.insert(i)
            return true
        }
        if name == "--sandbox" {
            sandbox = true
            sandboxArguments.insert(i)
            return true
        }
        guard ["--memory-limit", "--instruction-limit", "--time-limit"].contains(name) else { return false }
        guard i + 1 < argv.count else { return false }
        let text = argv[i + 1]
        switch name {
        case "--time-limit":
            guard let seconds = Double(text), seconds >= 0, seconds.isFinite else { return false }
            timeLimit = seconds
        default:
            guard let value = Int(text), value >= 0 else { return false }
            if name == "--memory-limit" { memoryLimit = value } else { instructionLimit = value }
        }
        sandboxArguments.insert(i)
        sandboxArguments.insert(i + 1)
        i += 1
        return true
    }

    /// `--profile`, `--profile=FILE` (FILE not empty), `--profile-rate=N` (1 ... 100000).
    private mutating func parseProfileOption(_ option: String) -> Bool {
        if option == "--profile" {
            profileFile = profileFile ?? ProfileOutput.defaultFile
            return true
        }
        if option.hasPrefix("--profile-rate=") {
            let digits = option.dropFirst("--profile-rate=".count)
            guard digits.allSatisfy({ $0.isASCII && $0.isNumber }), let rate = Int(digits), rate >= 1, rate <= 100_000 else { return false }
            profileRate = rate
            return true
        }
        let file = String(option.dropFirst("--profile=".count))
        guard !file.isEmpty else { return false }
        profileFile = file
        return true
    }

    let argumentCount: Int
    var hasScript: Bool { scriptIndex < argumentCount }
}
