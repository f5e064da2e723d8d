import Testing
import Foundation
@testable import BlocksBridge

/// A DAP client over a real TCP socket, as an editor attaching to a host's debug server.
private final class SocketClient: @unchecked Sendable {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var seq = 0

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr)
        let ok = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard ok == 0 else { throw DebugServerError.cannotListen("connect failed") }
    }

    /// Each wait for a message gives up after this many seconds.
    var patience = 20.0

    deinit { close(fd) }

    @discardableResult
    func send(_ command: String, _ arguments: String = "{}") -> Int {
        seq += 1
        let body = Array("{\"seq\":\(seq),\"type\":\"request\",\"command\":\"\(command)\",\"arguments\":\(arguments)}".utf8)
        let frame = Array("Content-Length: \(body.count)\r\n\r\n".utf8) + body
        _ = frame.withUnsafeBytes { Foundation.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return seq
    }

    /// The next message, parsed; nil when the connection ended or `deadline` passed. A read that a
    /// signal interrupts is retried (SO_RCVTIMEO would end it with EINTR, whatever SA_RESTART says).
    func receive(until deadline: Date) -> JSONValue? {
        while true {
            if let end = find([13, 10, 13, 10]) {
                let header = String(decoding: buffer[0 ..< end], as: UTF8.self)
                guard let length = Int(header.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") else { return nil }
                if buffer.count >= end + 4 + length {
                    let body = Array(buffer[end + 4 ..< end + 4 + length])
                    buffer.removeFirst(end + 4 + length)
                    return JSONValue.parse(body)
                }
            }
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return nil }
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, Int32(min(left * 1000 + 1, 60_000)))
            if polled < 0, errno == EINTR { continue }
            if polled <= 0 { continue }  // timed out: the deadline decides
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { return nil }
            buffer += chunk[0 ..< n]
        }
    }

    /// Reads until `match` accepts a message; that message.
    func wait(_ match: (JSONValue) -> Bool) -> JSONValue? {
        let deadline = Date(timeIntervalSinceNow: patience)
        while let message = receive(until: deadline) {
            if match(message) { return message }
        }
        return nil
    }

    func response(_ seq: Int) -> JSONValue? { wait { $0["type"]?.string == "response" && $0["request_seq"]?.int == seq } }
    func event(_ name: String) -> JSONValue? { wait { $0["type"]?.string == "event" && $0["event"]?.string == name } }

    /// initialize, attach, breakpoints at `lines` of `path`, configurationDone: each answered.
    func attach(breakpoints lines: [Int], in path: String) {
        _ = response(send("initialize"))
        _ = response(send("attach"))
        let specs = lines.map { "{\"line\":\($0)}" }.joined(separator: ",")
        _ = response(send("setBreakpoints", "{\"source\":{\"path\":\"\(path)\"},\"breakpoints\":[\(specs)]}"))
        _ = response(send("configurationDone"))
    }

    private func find(_ needle: [UInt8]) -> Int? {
        guard buffer.count >= needle.count else { return nil }
        for i in 0 ... buffer.count - needle.count where Array(buffer[i ..< i + needle.count]) == needle { return i }
        return nil
    }
}

/// Runs `body` on a thread of its own and waits for it without holding a thread of Swift
/// concurrency's pool: a test that blocked a pool thread in a socket read for seconds stalled every
/// other suite (the pool has as many threads as cores).
private func onItsOwnThread<R: Sendable>(_ body: @escaping @Sendable () -> R) async -> R {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}

/// What a client saw of a session (checked on the test's task once the session's thread is done).
private struct Seen: Sendable {
    var stoppedReason: String?
    var topLine: Int?
    var topPath: String?
    var evaluated: String?
    var scriptFinished = false
    var result: Int?
}

/// `LuaState.startDebugServer`: a host's scripts debugged by a client over TCP.
@Suite struct DebugServerTests {
    @Test func aHostsScriptStopsAtABreakpointAndTheClientInspectsAndResumesIt() async throws {
        nonisolated(unsafe) let lua = try LuaState()  // the host's thread runs it; this one only serves
        let port = try lua.startDebugServer(port: 0)
        #expect(port > 0)
        let client = try SocketClient(port: port)
        let path = "/host/script.lua"
        let seen = await onItsOwnThread { () -> Seen in
            var seen = Seen()
            _ = client.response(client.send("initialize", "{\"adapterID\":\"bk\"}"))
            _ = client.response(client.send("attach"))
            _ = client.response(client.send("setBreakpoints", "{\"source\":{\"path\":\"\(path)\"},\"breakpoints\":[{\"line\":3}]}"))
            _ = client.response(client.send("configurationDone"))
            let code = """
                local total = 0
                for i = 1, 3 do
                  total = total + i
                end
                return total
                """
            // The host's thread blocks in the stop until the client resumes it.
            let result = Locked<Int?>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                let values = try? lua.run(code, name: "@" + path)
                if case let .integer(n)? = values?.first { result.withLock { $0 = Int(n) } }
                done.signal()
            }
            seen.stoppedReason = client.event("stopped")?["body"]?["reason"]?.string
            let frames = client.response(client.send("stackTrace", "{\"threadId\":1}"))
            let top = frames?["body"]?["stackFrames"]?.array?.first
            seen.topLine = top?["line"]?.int
            seen.topPath = top?["source"]?["path"]?.string
            let evaluated = client.response(client.send("evaluate", "{\"expression\":\"i * 100\",\"frameId\":1,\"context\":\"watch\"}"))
            seen.evaluated = evaluated?["body"]?["result"]?.string
            _ = client.response(client.send("setBreakpoints", "{\"source\":{\"path\":\"\(path)\"},\"breakpoints\":[]}"))
            _ = client.response(client.send("continue", "{\"threadId\":1}"))
            seen.scriptFinished = done.wait(timeout: .now() + 20) == .success
            seen.result = result.withLock { $0 }
            return seen
        }
        #expect(seen.stoppedReason == "breakpoint")
        #expect(seen.topLine == 3)
        #expect(seen.topPath == path)
        #expect(seen.evaluated == "100")
        #expect(seen.scriptFinished)
        #expect(seen.result == 6)
        lua.stopDebugServer()
        // Stopped: the same state runs on with no debugger.
        if case let .integer(n)? = try lua.run("return 1 + 1").first { #expect(n == 2) } else { Issue.record("no result") }
    }

    @Test func aClientThatLeavesWhileTheScriptIsStoppedLetsItFinish() async throws {
        nonisolated(unsafe) let lua = try LuaState()
        let port = try lua.startDebugServer(port: 0)
        nonisolated(unsafe) var client: SocketClient? = try SocketClient(port: port)
        let seen = await onItsOwnThread { () -> Seen in
            var seen = Seen()
            _ = client?.response(client!.send("initialize"))
            _ = client?.response(client!.send("setBreakpoints", "{\"source\":{\"path\":\"/host/b.lua\"},\"breakpoints\":[{\"line\":2}]}"))
            _ = client?.response(client!.send("configurationDone"))
            let done = DispatchSemaphore(value: 0)
            let result = Locked<Int?>(nil)
            Thread.detachNewThread {
                let values = try? lua.run("local x = 1\nx = x + 1\nreturn x", name: "@/host/b.lua")
                if case let .integer(n)? = values?.first { result.withLock { $0 = Int(n) } }
                done.signal()
            }
            seen.stoppedReason = client?.event("stopped")?["body"]?["reason"]?.string
            client = nil  // closes the socket mid-stop
            seen.scriptFinished = done.wait(timeout: .now() + 20) == .success
            seen.result = result.withLock { $0 }
            return seen
        }
        #expect(seen.stoppedReason == "breakpoint")
        #expect(seen.scriptFinished)
        #expect(seen.result == 2)
        lua.stopDebugServer()
    }

    /// A worker started before the server runs undebugged (no hang, no crash); one started after
    /// stops at the breakpoint on its own thread, the host's thread waiting for its result; stopping
    /// the server while it is stopped lets it finish.
    @Test func workersBeforeTheServerRunOnAndAWorkerAfterItStopsAloneUntilTheServerStops() throws {
        nonisolated(unsafe) let lua = try LuaState()
        lua.installGlobals()
        let path = "/host/workers.lua"
        _ = try lua.run("""
            ch, go = bk.channel(), bk.channel()
            before = bk.worker(function(ch, go)
              ch:send("started")
              go:receive()
              local a = 1   -- line 5: not debugged (started before the server)
              return a
            end, ch, go)
            return ch:receive()
            """, name: "@" + path)
        let port = try lua.startDebugServer(port: 0)
        let client = try SocketClient(port: port)
        client.attach(breakpoints: [5, 14], in: path)
        let result = Locked<Int?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let values = try? lua.run("""
                go:send(true)
                local a = before:result()
                local after = bk.worker(function(n)
                  local b = n * 10

                  -- padding, so the worker's breakpoint is on line 14 of this chunk's file



                  -- (both chunks are named after the same file)



                  return b      -- line 14
                end, 4)
                return a + after:result()
                """, name: "@" + path)
            if case let .integer(n)? = values?.first { result.withLock { $0 = Int(n) } }
            done.signal()
        }
        let stopped = client.event("stopped")
        let thread = stopped?["body"]?["threadId"]?.int ?? 1
        #expect(thread != 1)
        #expect(stopped?["body"]?["allThreadsStopped"]?.bool == false)
        let frames = client.response(client.send("stackTrace", "{\"threadId\":\(thread)}"))
        let top = frames?["body"]?["stackFrames"]?.array?.first
        #expect(top?["line"]?.int == 14)
        let frameID = top?["id"]?.int ?? 0
        let evaluated = client.response(client.send("evaluate", "{\"expression\":\"b + 1\",\"frameId\":\(frameID),\"context\":\"watch\"}"))
        #expect(evaluated?["body"]?["result"]?.string == "41")
        lua.stopDebugServer()  // while the worker is stopped: it is let go
        #expect(done.wait(timeout: .now() + 20) == .success)
        #expect(result.withLock { $0 } == 41)
    }

    /// `runOnWorker`'s pool state is a thread of the session: its breakpoint stops it alone.
    @Test func aHostsRunOnWorkerStopsOnAPoolThread() throws {
        nonisolated(unsafe) let lua = try LuaState()
        let path = "/host/pool.lua"
        let square = try lua.run("return function(x)\n  local y = x * x\n  return y\nend", name: "@" + path, as: LuaRef.self)
        let port = try lua.startDebugServer(port: 0)
        let client = try SocketClient(port: port)
        client.attach(breakpoints: [3], in: path)
        let result = Locked<Int?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            if let n = try? lua.runOnWorker(square, 6, as: Int.self) { result.withLock { $0 = n } }
            done.signal()
        }
        let stopped = client.event("stopped")
        let thread = stopped?["body"]?["threadId"]?.int ?? 1
        #expect(thread != 1)
        let threads = client.response(client.send("threads"))?["body"]?["threads"]?.array ?? []
        #expect(threads.contains { $0["id"]?.int == thread && $0["name"]?.string == "worker pool 1" })
        let top = client.response(client.send("stackTrace", "{\"threadId\":\(thread)}"))?["body"]?["stackFrames"]?.array?.first
        #expect(top?["line"]?.int == 3)
        _ = client.response(client.send("continue", "{\"threadId\":\(thread)}"))
        #expect(done.wait(timeout: .now() + 20) == .success)
        #expect(result.withLock { $0 } == 36)
        lua.stopDebugServer()
    }

    // The flaky stop of the host's breakpoint test: a server stopped before its thread began to accept closed
    // its socket, the next server's socket got the same descriptor, and the first server's thread
    // then accepted that server's client (its breakpoints went to the wrong debugger, and the
    // script never stopped).
    @Test func aServerStoppedAtOnceNeverTakesTheNextServersClient() async throws {
        let failures = await onItsOwnThread { () -> [String] in
            var failures: [String] = []
            for round in 1 ... 20 where failures.isEmpty {
                do {
                    let first = try LuaState()
                    nonisolated(unsafe) let lua = try LuaState()
                    try first.startDebugServer(port: 0)
                    first.stopDebugServer()  // most often before its thread has begun to accept
                    let client = try SocketClient(port: try lua.startDebugServer(port: 0))
                    client.patience = 5
                    _ = client.response(client.send("initialize"))
                    _ = client.response(client.send("setBreakpoints", "{\"source\":{\"path\":\"/host/c.lua\"},\"breakpoints\":[{\"line\":1}]}"))
                    _ = client.response(client.send("configurationDone"))
                    let done = DispatchSemaphore(value: 0)
                    Thread.detachNewThread {
                        _ = try? lua.run("local x = 1\nreturn x", name: "@/host/c.lua")
                        done.signal()
                    }
                    if client.event("stopped") == nil { failures.append("round \(round): no stop") }
                    _ = client.response(client.send("continue", "{\"threadId\":1}"))
                    if done.wait(timeout: .now() + 20) == .timedOut { failures.append("round \(round): the script did not end") }
                    lua.stopDebugServer()
                } catch {
                    failures.append("round \(round): \(error)")
                }
            }
            return failures
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func aSecondServerIsRefusedAndStoppingEndsTheSession() throws {
        let lua = try LuaState()
        #expect(lua.debugSession == nil)
        let port = try lua.startDebugServer(port: 0)
        #expect(port > 0)
        #expect(throws: DebugServerError.self) { try lua.startDebugServer(port: 0) }
        lua.stopDebugServer()
        #expect(lua.debugSession == nil)
    }
}
