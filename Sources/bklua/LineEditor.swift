import BlocksBridge
import CEdit
#if canImport(Glibc)
import Glibc
#endif

/// The terminal prompt: libedit reads keys only when stdin is readable, so between keys the event
/// loop runs, and its output is printed above the prompt, the line being typed redrawn after it.
final class LineEditor {
    enum Input {
        case line(String)
        case endOfInput   // Ctrl-D on an empty line
        case cancelled    // Ctrl-C at the prompt
    }

    let loop: EventLoopAtPrompt

    /// Nil when libedit cannot be loaded (said on stderr): the REPL then reads plain lines.
    init?(loop: EventLoopAtPrompt, completer: Completer) {
        self.loop = loop
        var error = [CChar](repeating: 0, count: 256)
        guard cedit_initialize("bklua", &error, error.count) == 0 else {
            let reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            StandardStreams.writeError("bklua: no line editing (\(reason))\n")
            return nil
        }
        cedit_set_completer({ context, word in
            guard let context, let word else { return }
            let completer = Unmanaged<Completer>.fromOpaque(context).takeUnretainedValue()
            for candidate in completer.candidates(for: String(cString: word)) {
                cedit_add_completion(candidate)
            }
        }, Unmanaged.passRetained(completer).toOpaque())  // lives as long as the process
        cedit_watch_interrupts()
        cedit_watch_resizes()
    }

    /// Reads one line with `prompt`, running due work while waiting.
    func readLine(prompt: String) -> Input {
        // libedit keeps the prompt pointer: it must outlive the editing of the line.
        let promptCopy = strdup(prompt)
        defer { free(promptCopy) }
        _ = cedit_take_interrupt()
        cedit_begin_line(promptCopy)
        defer { cedit_end_line() }
        while true {
            if cedit_take_interrupt() != 0 {
                StandardStreams.writeOutput("\n")
                return .cancelled
            }
            cedit_apply_resize()
            let (keyReady, workReady) = cedit_has_pending_input() != 0 ? (.readable, false) : waitForKeyOrWork()
            if workReady {
                cedit_capture_output()
                // A callback stuck in a loop cannot be interrupted (it runs on a Lua thread of the
                // loop's), but as while a command runs, a second Ctrl-C ends bklua.
                cedit_set_running_state(loop.state.L)
                loop.runDueWork()
                cedit_set_running_state(nil)
                cedit_show_captured_output()
            }
            switch keyReady {
            case .none: continue
            case .closed: return .endOfInput
            case .readable: break
            }
            switch cedit_read_key() {
            case CEDIT_LINE:
                guard let line = cedit_take_line() else { continue }
                defer { free(line) }
                return .line(String(cString: line))
            case CEDIT_EOF:
                return .endOfInput
            default:
                continue
            }
        }
    }

    enum KeyState { case none, readable, closed }

    /// Waits until stdin is readable or loop work is due; a signal ends the wait early.
    private func waitForKeyOrWork() -> (key: KeyState, work: Bool) {
        var timeout: Int32 = -1
        if let seconds = loop.secondsUntilNextWork {
            if seconds <= 0 { return (.none, true) }
            timeout = Int32(min((seconds * 1000).rounded(.up), 3_600_000))
        }
        var descriptors = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0)]
        if let wakeup = loop.wakeupDescriptor {
            descriptors.append(pollfd(fd: wakeup, events: Int16(POLLIN), revents: 0))
        }
        // What other threads print meanwhile wakes the wait too, and is shown above the line.
        let output = cedit_capture_while_waiting()
        if output >= 0 { descriptors.append(pollfd(fd: output, events: Int16(POLLIN), revents: 0)) }
        let count = descriptors.count
        let ready = loop.waitOutsideLua {
            descriptors.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t(count), timeout) }
        }
        if output >= 0 { cedit_show_output_of_wait() }
        if ready < 0 { return (.none, false) }  // EINTR: the caller looks at the interrupt flag
        let events = descriptors[0].revents
        // A hung-up terminal stays "ready" with nothing to read: that is the end of input.
        let key: KeyState = events & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 ? .closed
            : events & Int16(POLLIN) != 0 ? .readable : .none
        let woken = loop.wakeupDescriptor != nil && descriptors[1].revents != 0
        let due = (loop.secondsUntilNextWork ?? 1) <= 0
        return (key, woken || due)
    }
}
