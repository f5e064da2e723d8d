#if canImport(Glibc)
import Glibc
#endif

/// `bklua -e ''` against `lua5.4 -e ''`: whole process start to exit, each side spawned `runs` times
/// per round (posix_spawn, output to /dev/null), alternating. Also reports the time per start and
/// each side's peak resident memory (VmHWM, read by the same one-line script in both: a spawned
/// child's ru_maxrss would count this process's memory, shared until its exec). bklua is the
/// release build beside bkbench.
func startUpBenchmark(runs: Int) throws -> Benchmark {
    let directory = CommandLine.arguments[0].split(separator: "/", omittingEmptySubsequences: false)
        .dropLast().joined(separator: "/")
    let bklua = (directory.isEmpty ? "." : directory) + "/bklua"
    guard access(bklua, X_OK) == 0 else { throw BenchmarkError("missing \(bklua) (scripts/bench builds it)") }
    var perStart: [String: [Double]] = [:]
    func round(_ program: String) throws -> Double {
        let time = try seconds {
            for _ in 0 ..< runs { try spawnAndWait([program, "-e", ""]) }
        } / Double(runs)
        perStart[program, default: []].append(time)
        return time
    }
    return Benchmark(
        name: "start-up: bklua -e '' vs lua5.4 -e ''", target: 3.0,
        ours: { try round(bklua) },
        reference: { try round("lua5.4") },
        report: {
            let ms = { (program: String) in format(median(perStart[program] ?? [0]) * 1000, 2) + " ms" }
            return ["per start: bklua \(ms(bklua)), lua5.4 \(ms("lua5.4"))",
                    "peak memory (VmHWM): bklua \(try peakMemory(bklua)) KiB, lua5.4 \(try peakMemory("lua5.4")) KiB"]
        })
}

/// VmHWM of `program -e <script that reads it>`, in KiB.
private func peakMemory(_ program: String) throws -> Int {
    let script = "for l in io.lines('/proc/self/status') do local k = l:match('^VmHWM:%s*(%d+)') if k then print(k) end end"
    guard let pipe = popen("\(program) -e \"\(script)\"", "r") else { throw BenchmarkError("cannot run \(program)") }
    var line = [CChar](repeating: 0, count: 64)
    let read = fgets(&line, Int32(line.count), pipe) != nil
    pclose(pipe)
    let text = String(decoding: line.prefix { $0 != 0 && $0 != 10 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    guard read, let kib = Int(text) else { throw BenchmarkError("no VmHWM from \(program)") }
    return kib
}

/// Runs `argv` (searched on PATH) with stdout on /dev/null and waits for it to exit 0.
private func spawnAndWait(_ argv: [String]) throws {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    var arguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
    defer { for argument in arguments { free(argument) } }
    var pid: pid_t = 0
    guard posix_spawnp(&pid, argv[0], &actions, nil, &arguments, environ) == 0 else {
        throw BenchmarkError("could not run \(argv[0])")
    }
    var status: Int32 = 0
    guard waitpid(pid, &status, 0) == pid, status == 0 else { throw BenchmarkError("failed: \(argv.joined(separator: " "))") }
}
