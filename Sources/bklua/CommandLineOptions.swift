/// `bklua`'s command line, parsed exactly as lua.c's `collectargs` does.
struct CommandLineOptions {
    var interactive = false   // -i
    var version = false       // -v (also implied by -i)
    var executes = false      // -e seen
    var ignoreEnvironment = false  // -E
    var help = false          // --help (not a lua.c option: only as the first argument)
    /// Index in `argv` of the script (argv.count when there is none).
    var scriptIndex: Int
    /// Index in `argv` of the bad option, when parsing failed.
    var badOption: Int?

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
                if hasExtra { badOption = i; return }
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

    let argumentCount: Int
    var hasScript: Bool { scriptIndex < argumentCount }
}
