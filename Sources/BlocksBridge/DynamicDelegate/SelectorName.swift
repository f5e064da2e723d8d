/// Method names of dynamic delegates: an Objective-C selector's first two parts camel-cased.
///
/// `alertView:willDismissWithButtonIndex:` → `alertViewWillDismissWithButtonIndex`,
/// `parserDidStartDocument:` → `parserDidStartDocument`; a name without `:` is already a method name.
/// Every function taking a method name accepts either form.
enum SelectorName {
    static func methodName(_ selector: String) -> String {
        guard selector.contains(":") else { return selector }
        let parts = selector.split(separator: ":", omittingEmptySubsequences: true)
        guard let first = parts.first else { return selector }
        guard parts.count > 1 else { return String(first) }
        let second = parts[1]
        return String(first) + second.prefix(1).uppercased() + second.dropFirst()
    }
}
