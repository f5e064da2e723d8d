import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// The `XMLParserDelegate` Foundation talks to: every callback becomes a call of the Lua dynamic
/// delegate's method of the same name (first two selector parts), with the parser's userdata first.
final class XMLParserForwarder: NSObject, XMLParserDelegate {
    private let forwarder: DelegateForwarder

    init(_ forwarder: DelegateForwarder) { self.forwarder = forwarder }

    private func call(_ method: String, _ strings: String?...) {
        forwarder.call(method, arguments: { stack in
            for string in strings {
                if let string { stack.push(string) } else { stack.pushNil() }
            }
            return Int32(strings.count)
        })
    }

    func parserDidStartDocument(_ parser: XMLParser) { call("parserDidStartDocument") }
    func parserDidEndDocument(_ parser: XMLParser) { call("parserDidEndDocument") }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
        forwarder.call("parserDidStartElement", arguments: { stack in
            stack.push(elementName)
            if let namespaceURI { stack.push(namespaceURI) } else { stack.pushNil() }
            if let qName { stack.push(qName) } else { stack.pushNil() }
            stack.pushNewTable(recordCount: Int32(attributeDict.count))
            for (key, value) in attributeDict {
                stack.push(value)
                stack.rawSet(-2, field: key)
            }
            return 4
        })
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?) {
        call("parserDidEndElement", elementName, namespaceURI, qName)
    }

    func parser(_ parser: XMLParser, didStartMappingPrefix prefix: String, toURI namespaceURI: String) {
        call("parserDidStartMappingPrefix", prefix, namespaceURI)
    }

    func parser(_ parser: XMLParser, didEndMappingPrefix prefix: String) {
        call("parserDidEndMappingPrefix", prefix)
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        call("parserFoundCharacters", string)
    }

    func parser(_ parser: XMLParser, foundIgnorableWhitespace whitespaceString: String) {
        call("parserFoundIgnorableWhitespace", whitespaceString)
    }

    func parser(_ parser: XMLParser, foundProcessingInstructionWithTarget target: String, data: String?) {
        call("parserFoundProcessingInstructionWithTarget", target, data)
    }

    func parser(_ parser: XMLParser, foundComment comment: String) {
        call("parserFoundComment", comment)
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        forwarder.call("parserFoundCDATA", arguments: { stack in
            CDATABlock.withUnsafeBytes { stack.push(bytes: $0) }
            return 1
        })
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
        call("parserParseErrorOccurred", "\(parseError)")
    }

    func parser(_ parser: XMLParser, validationErrorOccurred validationError: Error) {
        call("parserValidationErrorOccurred", "\(validationError)")
    }
}
