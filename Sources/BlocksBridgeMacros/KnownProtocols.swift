/// Protocols a class may name first in its inheritance clause: a first name among these is not
/// a superclass, so a class naming neither LuaExportable nor a superclass is diagnosed.
enum SuperclassGuess {
    static let knownProtocols: Set = [
        "AnyObject", "Equatable", "Hashable", "Comparable", "Identifiable", "CustomStringConvertible",
        "CustomDebugStringConvertible", "Sequence", "Collection", "BidirectionalCollection",
        "RandomAccessCollection", "MutableCollection", "RangeReplaceableCollection", "IteratorProtocol",
        "Codable", "Encodable", "Decodable", "Sendable", "SendableMetatype", "Error", "CaseIterable",
        "LuaBridged", "LuaConvertible", "LuaObservable", "LuaExportable",
    ]
}
