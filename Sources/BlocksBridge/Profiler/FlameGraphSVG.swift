extension LuaProfile {
    /// An interactive flame graph of the samples: one self-contained SVG file (its script inline,
    /// nothing fetched) that any browser opens offline. The root is at the bottom, each frame as
    /// wide as its share of the samples; hovering shows a frame's samples, a click zooms into it
    /// (Escape or "Reset zoom" goes back), "Search" (or Ctrl-F, /) highlights the frames a regular
    /// expression matches and says what share of the samples they cover. `#search=RE` and
    /// `#zoom=TEXT` at the end of the file's address do the same on opening.
    public var svg: String { FlameGraphSVG(self).document() }
}

/// Lays the folded stacks out as a tree of frames (children sorted by name, as flamegraph.pl does)
/// and writes them as SVG, each frame a `<g>` with its place in samples (data-x, data-w) and depth
/// (data-d), so the script can lay the graph out again when zooming.
struct FlameGraphSVG {
    private final class Node {
        let name: String
        var samples = 0
        var children: [String: Node] = [:]
        init(_ name: String) { self.name = name }
    }

    static let width = 1200.0
    static let margin = 10.0
    static let frameHeight = 16.0
    static let top = 40.0
    static let bottom = 30.0
    /// Frames narrower than this (pixels) are left out, as flamegraph.pl does.
    static let minimumWidth = 0.1

    private let root = Node("all")
    private let rate: Int
    private var depth = 0

    init(_ profile: LuaProfile) {
        rate = profile.rate
        for (stack, count) in profile.stacks where count > 0 {
            var node = root
            node.samples += count
            var level = 0
            for frame in stack.split(separator: ";", omittingEmptySubsequences: false) {
                let name = String(frame)
                let child = node.children[name] ?? Node(name)
                node.children[name] = child
                child.samples += count
                node = child
                level += 1
            }
            depth = max(depth, level)
        }
    }

    func document() -> String {
        let total = max(root.samples, 1)
        let height = Self.top + Double(depth + 1) * Self.frameHeight + Self.bottom
        let scale = (Self.width - 2 * Self.margin) / Double(total)
        var out = """
        <?xml version="1.0" standalone="no"?>
        <svg version="1.1" xmlns="http://www.w3.org/2000/svg" width="\(Int(Self.width))" height="\(Int(height))" \
        viewBox="0 0 \(Int(Self.width)) \(Int(height))" data-total="\(root.samples)" data-rate="\(rate)" onload="init(evt)">
        <style>
        text { font-family: Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 12px; fill: #000; }
        #frames g { cursor: pointer; }
        #frames g:hover rect { stroke: #000; stroke-width: 0.7; }
        .hidden { display: none; }
        .faded rect { opacity: 0.6; }
        .button { cursor: pointer; fill: #1a4fa0; }
        </style>
        <rect x="0" y="0" width="100%" height="100%" fill="#f7f7f2"/>
        <text x="\(Int(Self.width / 2))" y="24" text-anchor="middle" style="font-size: 17px">Lua flame graph: \
        \(root.samples) samples at \(rate) per CPU second</text>
        <text id="reset" class="button hidden" x="\(Int(Self.margin))" y="24">Reset zoom</text>
        <text id="search" class="button" x="\(Int(Self.width - 110))" y="24">Search</text>
        <text id="details" x="\(Int(Self.margin))" y="\(Int(height - 10))"> </text>
        <text id="matched" x="\(Int(Self.width - 110))" y="\(Int(height - 10))"> </text>
        <g id="frames">

        """
        var stack: [(node: Node, x: Int, level: Int)] = [(root, 0, 0)]
        while let (node, x, level) = stack.popLast() {
            let w = Double(node.samples) * scale
            if w < Self.minimumWidth { continue }
            let px = Self.margin + Double(x) * scale
            let py = height - Self.bottom - Double(level + 1) * Self.frameHeight
            let share = LuaProfile.decimal(100 * Double(node.samples) / Double(total), digits: 2)
            let name = Self.escaped(node.name)
            let sampleWord = node.samples == 1 ? "sample" : "samples"
            out += "<g data-x=\"\(x)\" data-w=\"\(node.samples)\" data-d=\"\(level)\" data-n=\"\(name)\">"
            out += "<title>\(name) (\(node.samples) \(sampleWord), \(share)%)</title>"
            out += "<rect x=\"\(LuaProfile.decimal(px, digits: 1))\" y=\"\(Int(py))\" width=\"\(LuaProfile.decimal(w, digits: 2))\" "
            out += "height=\"\(Int(Self.frameHeight - 1))\" rx=\"2\" fill=\"\(Self.color(of: node.name))\"/>"
            out += "<text x=\"\(LuaProfile.decimal(px + 3, digits: 1))\" y=\"\(Int(py + 11.5))\">\(Self.escaped(Self.label(node.name, width: w)))</text></g>\n"
            // Children left to right by name; pushed in reverse so they are written in order.
            var childX = x
            var placed: [(Node, Int, Int)] = []
            for key in node.children.keys.sorted() {
                guard let child = node.children[key] else { continue }
                placed.append((child, childX, level + 1))
                childX += child.samples
            }
            stack.append(contentsOf: placed.reversed())
        }
        out += "</g>\n<script type=\"text/ecmascript\"><![CDATA[\n\(Self.script)\n]]></script>\n</svg>\n"
        return out
    }

    /// The text that fits a frame `width` pixels wide (about 7 pixels a character), cut with "..".
    static func label(_ name: String, width: Double) -> String {
        let fits = Int((width - 6) / 7)
        if fits < 3 { return "" }
        if name.count <= fits { return name }
        return String(name.prefix(fits - 2)) + ".."
    }

    /// Warm colours for Lua, blue for Swift, grey for C, green for the roots (main, tasks,
    /// workers, coroutines); the same name always gets the same colour.
    static func color(of name: String) -> String {
        var hash: UInt32 = 2_166_136_261
        for byte in name.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        let a = Double(hash & 0xff) / 255, b = Double((hash >> 8) & 0xff) / 255
        let (r, g, bl): (Double, Double, Double)
        if name.hasPrefix("[Swift] ") { (r, g, bl) = (70 + 50 * a, 130 + 60 * b, 225) }
        else if name.hasPrefix("[C] ") { (r, g, bl) = (150 + 40 * a, 150 + 40 * a, 150 + 40 * b) }
        else if name == "all" || name == "main" || name == "..." || name.hasPrefix("task ") || name.hasPrefix("worker")
                    || name.hasPrefix("coroutine ") { (r, g, bl) = (90 + 60 * a, 180 + 50 * b, 90 + 40 * a) }
        else { (r, g, bl) = (205 + 50 * a, 60 + 170 * b, 40 * a) }
        return "rgb(\(Int(r)),\(Int(g)),\(Int(bl)))"
    }

    static func escaped(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            // XML 1.0 allows no other control character, even as a reference (the collector
            // replaces them; a host's own profile text may still hold one).
            case "\t", "\n", "\r": out += "&#\(c.unicodeScalars.first?.value ?? 32);"
            default:
                if c.unicodeScalars.contains(where: { $0.value < 0x20 || ($0.value >= 0x7f && $0.value < 0xa0) }) {
                    out += "?"
                } else {
                    out.append(c)
                }
            }
        }
        return out
    }

    /// Zoom, search and the details line. Frames carry their place in samples; laying out again
    /// maps the zoomed frame's range onto the full width.
    static let script = """
    "use strict";
    var svg, frames, details, matchedText, resetButton, total, left = 10, width = 1180, lastSearch = "";
    function init(evt) {
      svg = document.documentElement;
      frames = Array.prototype.slice.call(document.getElementById("frames").children);
      details = document.getElementById("details");
      matchedText = document.getElementById("matched");
      resetButton = document.getElementById("reset");
      total = +svg.getAttribute("data-total") || 1;
      width = +svg.getAttribute("width") - 2 * left;
      frames.forEach(function (g) {
        g.addEventListener("click", function () { zoom(g); });
        g.addEventListener("mouseover", function () { details.textContent = g.querySelector("title").textContent; });
        g.addEventListener("mouseout", function () { details.textContent = " "; });
      });
      document.getElementById("search").addEventListener("click", function () { askSearch(); });
      resetButton.addEventListener("click", function () { unzoom(); });
      window.addEventListener("keydown", function (e) {
        if ((e.ctrlKey && e.key === "f") || e.key === "/") { e.preventDefault(); askSearch(); }
        else if (e.key === "Escape") { unzoom(); search(""); }
      });
      var hash = decodeURIComponent(location.hash.slice(1));
      if (hash.indexOf("zoom=") === 0) {
        var text = hash.slice(5);
        var found = frames.filter(function (g) { return g.getAttribute("data-n").indexOf(text) >= 0; })[0];
        if (found) zoom(found);
      } else if (hash.indexOf("search=") === 0) {
        search(hash.slice(7));
      }
      mark();
    }
    function place(g, x, w) {
      var rect = g.querySelector("rect"), text = g.querySelector("text");
      rect.setAttribute("x", (left + x).toFixed(1));
      rect.setAttribute("width", w.toFixed(2));
      text.setAttribute("x", (left + x + 3).toFixed(1));
      var name = g.getAttribute("data-n"), fits = Math.floor((w - 6) / 7);
      text.textContent = fits < 3 ? "" : name.length <= fits ? name : name.slice(0, fits - 2) + "..";
      g.classList.toggle("hidden", w < 0.1);
    }
    function zoom(node) {
      var x = +node.getAttribute("data-x"), w = +node.getAttribute("data-w"), d = +node.getAttribute("data-d");
      frames.forEach(function (g) {
        var gx = +g.getAttribute("data-x"), gw = +g.getAttribute("data-w"), gd = +g.getAttribute("data-d");
        if (gd >= d && gx >= x && gx + gw <= x + w) {
          g.classList.remove("faded");
          place(g, (gx - x) / w * width, gw / w * width);
        } else if (gd < d && gx <= x && gx + gw >= x + w) {
          g.classList.add("faded");
          place(g, 0, width);
        } else {
          g.classList.add("hidden");
        }
      });
      resetButton.classList.toggle("hidden", d === 0);
      svg.setAttribute("data-zoomed", node.getAttribute("data-n"));
      mark();
    }
    function unzoom() {
      frames.forEach(function (g) {
        g.classList.remove("faded");
        place(g, +g.getAttribute("data-x") / total * width, +g.getAttribute("data-w") / total * width);
      });
      resetButton.classList.add("hidden");
      svg.removeAttribute("data-zoomed");
      mark();
    }
    function askSearch() {
      var term = window.prompt("Search for frames (a regular expression; empty clears):", lastSearch);
      if (term !== null) search(term);
    }
    function search(term) {
      lastSearch = term;
      var re = null;
      try { re = term ? new RegExp(term) : null; } catch (e) { re = null; }
      var ranges = [];
      frames.forEach(function (g) {
        var rect = g.querySelector("rect");
        if (!rect.hasAttribute("data-fill")) rect.setAttribute("data-fill", rect.getAttribute("fill"));
        var hit = re !== null && re.test(g.getAttribute("data-n"));
        rect.setAttribute("fill", hit ? "rgb(230,0,230)" : rect.getAttribute("data-fill"));
        if (hit) ranges.push([+g.getAttribute("data-x"), +g.getAttribute("data-x") + +g.getAttribute("data-w")]);
      });
      // A frame inside another match adds nothing: the samples are the union of the ranges.
      ranges.sort(function (a, b) { return a[0] - b[0]; });
      var matched = 0, end = -1;
      ranges.forEach(function (r) {
        if (r[1] <= end) return;
        matched += r[1] - Math.max(r[0], end);
        end = r[1];
      });
      matchedText.textContent = re === null ? " " : "Matched: " + (100 * matched / total).toFixed(1) + "%";
      svg.setAttribute("data-matched", re === null ? "0" : String(matched));
    }
    function mark() {
      var shown = frames.filter(function (g) { return !g.classList.contains("hidden"); }).length;
      svg.setAttribute("data-rendered", String(shown));
    }
    """
}
