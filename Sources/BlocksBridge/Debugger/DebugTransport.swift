#if canImport(Glibc)
import Glibc
#endif

/// The Debug Adapter Protocol's framing (`Content-Length: N\r\n\r\n` then N bytes of JSON) over a
/// pair of file descriptors: bklua's stdin/stdout (`--dap`) or an accepted TCP connection. A
/// reader thread hands each message to the session; writes from any thread go out whole, one at a
/// time.
package final class DebugTransport: @unchecked Sendable {
    /// Larger messages are refused and the connection closed (a client's bug or an attack: nothing
    /// the protocol sends comes near it).
    package static let maximumMessageBytes = 16 << 20
    private static let maximumHeaderBytes = 8 << 10

    private let input: Int32
    private let output: Int32
    private let closesDescriptors: Bool
    private let writeLock = PlainLock()
    private var closed = false
    /// The last message's `seq` (under `writeLock`).
    private var sequence = 0

    package init(input: Int32, output: Int32, closesDescriptors: Bool) {
        self.input = input
        self.output = output
        self.closesDescriptors = closesDescriptors
    }

    /// Sends one message, `seq` first (dropped once the transport is closed). DAP's `seq` counts 1,
    /// 2, 3... on each connection in the order messages go out: numbered and written under one
    /// lock, so messages sent from several threads at once cannot swap numbers.
    package func send(_ members: [(String, JSONValue)]) {
        writeLock.withLock {
            guard !closed else { return }
            sequence += 1
            let body = Array(JSONValue.object([("seq", .number(Double(sequence)))] + members).text.utf8)
            let frame = Array("Content-Length: \(body.count)\r\n\r\n".utf8) + body
            var sent = 0
            while sent < frame.count {
                // A socket never raises SIGPIPE here (the host's signals are its own); bklua --dap
                // ignores SIGPIPE for its pipes.
                let n = frame.withUnsafeBytes { bytes -> Int in
                    guard let base = bytes.baseAddress else { return 0 }
                    if closesDescriptors { return Glibc.send(output, base + sent, frame.count - sent, Int32(MSG_NOSIGNAL)) }
                    return write(output, base + sent, frame.count - sent)
                }
                if n < 0, errno == EINTR { continue }
                if n <= 0 { closed = true; return }
                sent += n
            }
        }
    }

    /// Closes the connection: the reader's next read ends (a socket is shut down at once).
    package func close() {
        writeLock.withLock {
            if closed { return }
            closed = true
        }
        shutdown(input, Int32(SHUT_RDWR))
        if closesDescriptors {
            shutdown(output, Int32(SHUT_RDWR))
        }
    }

    /// Reads messages until the connection ends or breaks: `message` gets each body parsed (nil for
    /// one that is not JSON), `failed` a description of a framing error that ends the connection.
    package func readMessages(_ message: (JSONValue?) -> Void, failed: (String) -> Void) {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        func fill() -> Bool {
            while true {
                let n = chunk.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                if n < 0, errno == EINTR { continue }
                if n <= 0 { return false }
                buffer.append(contentsOf: chunk[0 ..< n])
                return true
            }
        }
        let separator: [UInt8] = [13, 10, 13, 10]
        while true {
            // Headers.
            var end: Int?
            while end == nil {
                if let found = DebugTransport.find(separator, in: buffer) { end = found; break }
                if buffer.count > DebugTransport.maximumHeaderBytes { failed("a message header longer than 8 KiB"); return }
                if !fill() { return }
            }
            guard let headerEnd = end else { return }
            let header = String(decoding: buffer[0 ..< headerEnd], as: UTF8.self)
            buffer.removeFirst(headerEnd + 4)
            var length: Int?
            for line in header.split(separator: "\r\n") {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2, parts[0].lowercased() == "content-length" {
                    length = Int(parts[1].trimmingSpaces)
                }
            }
            guard let length, length >= 0 else { failed("a message without a valid Content-Length"); return }
            guard length <= DebugTransport.maximumMessageBytes else {
                failed("a message of \(length) bytes (at most \(DebugTransport.maximumMessageBytes))")
                return
            }
            while buffer.count < length {
                if !fill() { return }
            }
            let body = Array(buffer[0 ..< length])
            buffer.removeFirst(length)
            message(JSONValue.parse(body))
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0 ... haystack.count - needle.count where haystack[i] == needle[0] {
            if haystack[i ..< i + needle.count].elementsEqual(needle) { return i }
        }
        return nil
    }

    deinit {
        if closesDescriptors {
            Glibc.close(input)
            if output != input { Glibc.close(output) }
        }
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

/// A TCP listening socket for `--dap-listen` and `startDebugServer`: loopback unless a host is
/// given; one connection at a time.
///
/// `close()` only shuts the socket down (a blocked or later `accept` then fails); the descriptor
/// is closed when the last user (the accepting thread) lets the listener go. Closed at once, its
/// number could go to the next server's socket before this listener's thread first called
/// `accept`, and that thread would then take the other server's client.
package final class DebugListener: @unchecked Sendable {
    package let port: Int
    private let socketDescriptor: Int32

    /// Binds `host` (an IPv4 address or "localhost") and `port` (0: any free port).
    package init(host: String = "127.0.0.1", port: Int) throws(DebugServerError) {
        let address = host == "localhost" ? "127.0.0.1" : host
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw .cannotListen("socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        guard port >= 0, port <= 65535, inet_pton(AF_INET, address, &addr.sin_addr) == 1 else {
            Glibc.close(fd)
            throw .cannotListen("bad address \(host):\(port)")
        }
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 1) == 0 else {
            let message = String(cString: strerror(errno))
            Glibc.close(fd)
            throw .cannotListen("\(host):\(port): \(message)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.port = Int(UInt16(bigEndian: addr.sin_port))
        socketDescriptor = fd
    }

    /// Waits for a connection; nil once the listener is closed.
    package func accept() -> DebugTransport? {
        while true {
            let fd = Glibc.accept(socketDescriptor, nil, nil)
            if fd < 0, errno == EINTR { continue }
            guard fd >= 0 else { return nil }
            var yes: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            return DebugTransport(input: fd, output: fd, closesDescriptors: true)
        }
    }

    package func close() {
        shutdown(socketDescriptor, Int32(SHUT_RDWR))
    }

    deinit { Glibc.close(socketDescriptor) }
}

/// Why a debug server could not start.
public enum DebugServerError: Error, CustomStringConvertible, Sendable {
    case cannotListen(String)
    case alreadyRunning

    public var description: String {
        switch self {
        case let .cannotListen(why): return "cannot listen for a debugger on \(why)"
        case .alreadyRunning: return "a debug server already runs for this state"
        }
    }
}
