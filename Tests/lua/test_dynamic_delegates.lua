-- Dynamic delegates: A2DynamicDelegate, NSObject+A2DynamicDelegate, NSObject+A2BlockDelegate,
-- and the Foundation XMLParser bridged through the same machinery.

local AlertDelegate = bk.protocol("TestAlertViewDelegate", {
  ["alertView:clickedButtonAtIndex:"] = {},
  ["alertView:willDismissWithButtonIndex:"] = {},
  alertViewShouldEnableFirstOtherButton = { returns = true, combine = "and" },
  alertViewShouldBeginEditing = { returns = false, combine = "or" },
  alertViewTitle = { required = true, returns = "untitled" },
  willPresentAlertView = true,
})

-- A2DynamicDelegate's own tests --------------------------------------------------------------

test("selectors become method names: first two parts camel-cased", function()
  local dd = bk.dynamicDelegateForProtocol({}, AlertDelegate)
  local got
  dd:implementMethod("alertView:willDismissWithButtonIndex:", function(view, index) got = index end)
  dd:alertViewWillDismissWithButtonIndex("view", 3)
  eq(got, 3)
  eq(dd:blockImplementationForMethod("alertViewWillDismissWithButtonIndex"),
     dd:blockImplementationForMethod("alertView:willDismissWithButtonIndex:"))
  ok(dd:respondsToSelector("alertView:willDismissWithButtonIndex:"))
  local methods = AlertDelegate.methods
  ok(methods.alertViewClickedButtonAtIndex, "normalised in the protocol")
  eq(methods["alertView:clickedButtonAtIndex:"], nil)
  eq(methods.alertViewTitle.required, true)
  eq(methods.alertViewTitle.returns, "untitled")
  eq(methods.alertViewShouldEnableFirstOtherButton.combine, "and")
end)

test("a block implementation gets the method's arguments and answers", function()
  local dd = bk.dynamicDelegateForProtocol({}, AlertDelegate)
  local args
  dd:implementMethod("alertViewClickedButtonAtIndex", function(...) args = table.pack(...) return "clicked" end)
  eq(dd:alertViewClickedButtonAtIndex("view", 2), "clicked")
  eq(args.n, 2)
  eq(args[1], "view")
  eq(args[2], 2)
end)

test("the block wins over the real delegate, even with false", function()
  local dd = bk.dynamicDelegateForProtocol({}, AlertDelegate)
  local real = { alertViewTitle = function(self, v) return "real" end }
  dd.realDelegate = real
  eq(dd:alertViewTitle("v"), "real")
  dd:implementMethod("alertViewTitle", function() return false end)
  eq(dd:alertViewTitle("v"), false)
  dd:implementMethod("alertViewTitle", function() return "block" end)
  eq(dd:alertViewTitle("v"), "block")
end)

test("both the real delegate and the block are called, the real delegate first", function()
  local dd = bk.dynamicDelegateForProtocol({}, AlertDelegate)
  local order = {}
  dd.realDelegate = { alertViewClickedButtonAtIndex = function(self, v, i) order[#order + 1] = "real" .. i end }
  dd:implementMethod("alertViewClickedButtonAtIndex", function(v, i) order[#order + 1] = "block" .. i end)
  dd:alertViewClickedButtonAtIndex("v", 1)
  deepEq(order, { "real1", "block1" })
end)

test("a nil answer from the block falls through to the real delegate, then the default", function()
  local dd = bk.dynamicDelegateForProtocol({}, AlertDelegate)
  local blockCalled, realCalled = 0, 0
  dd:implementMethod("alertViewTitle", function() blockCalled = blockCalled + 1 end)
  eq(dd:alertViewTitle(), "untitled")
  local real
  real = { alertViewTitle = function(self, v) realCalled = realCalled + 1 eq(self, real) return "real " .. v end }
  dd.realDelegate = real
  eq(dd:alertViewTitle("x"), "real x")
  eq(blockCalled, 2)
  eq(realCalled, 1)
end)

test("forwarding to the real delegate as real:name(...)", function()
  local dd = bk.dynamicDelegateForProtocol({}, AlertDelegate)
  local Real = {}
  Real.__index = Real
  function Real:alertViewClickedButtonAtIndex(view, index) self.last = index return index * 10 end
  local real = setmetatable({}, Real)
  dd.realDelegate = real
  eq(dd:alertViewClickedButtonAtIndex("v", 4), 40)
  eq(real.last, 4)
  eq(dd.realDelegate, real)
end)

test("defaults: a method with neither block nor real delegate answers the protocol's default", function()
  local dd = bk.dynamicDelegateForProtocol({}, AlertDelegate)
  eq(dd:alertViewTitle(), "untitled")  -- required, still the default
  eq(dd:alertViewShouldEnableFirstOtherButton(), true)
  eq(dd:alertViewShouldBeginEditing(), false)
  eq(dd:alertViewClickedButtonAtIndex("v", 1), nil)
  dd.realDelegate = {}  -- a real delegate without the method
  eq(dd:alertViewTitle(), "untitled")
end)

test("combine 'and' joins the block's and the real delegate's answers", function()
  local dd = bk.dynamicDelegateForProtocol({}, AlertDelegate)
  local answer = true
  local real = { alertViewShouldEnableFirstOtherButton = function() return answer end }
  dd.realDelegate = real
  eq(dd:alertViewShouldEnableFirstOtherButton(), true)
  answer = false
  eq(dd:alertViewShouldEnableFirstOtherButton(), false, "real only")
  local calls = 0
  dd:implementMethod("alertViewShouldEnableFirstOtherButton", function() calls = calls + 1 return true end)
  eq(dd:alertViewShouldEnableFirstOtherButton(), false, "true and false")
  answer = true
  eq(dd:alertViewShouldEnableFirstOtherButton(), true, "true and true")
  eq(calls, 2, "the block runs every time")
  dd.realDelegate = nil
  dd:implementMethod("alertViewShouldEnableFirstOtherButton", function() return false end)
  eq(dd:alertViewShouldEnableFirstOtherButton(), false, "block only")
end)

test("combine 'or' joins the block's and the real delegate's answers", function()
  local dd = bk.dynamicDelegateForProtocol({}, AlertDelegate)
  local realCalls = 0
  dd.realDelegate = { alertViewShouldBeginEditing = function() realCalls = realCalls + 1 return false end }
  dd:implementMethod("alertViewShouldBeginEditing", function() return true end)
  eq(dd:alertViewShouldBeginEditing(), true)
  eq(realCalls, 1, "both are asked")
  dd:implementMethod("alertViewShouldBeginEditing", function() return false end)
  eq(dd:alertViewShouldBeginEditing(), false)
end)

test("respondsToSelector: block or real delegate", function()
  local dd = bk.dynamicDelegateForProtocol({}, AlertDelegate)
  eq(dd:respondsToSelector("alertViewTitle"), false)
  dd:implementMethod("alertViewTitle", function() end)
  eq(dd:respondsToSelector("alertViewTitle"), true)
  dd:removeBlockImplementationForMethod("alertViewTitle")
  eq(dd:respondsToSelector("alertViewTitle"), false)
  eq(dd:blockImplementationForMethod("alertViewTitle"), nil)
  local Real = { willPresentAlertView = function() end }
  Real.__index = Real
  local real = setmetatable({}, Real)
  dd.realDelegate = real
  eq(dd:respondsToSelector("willPresentAlertView"), true, "through the real delegate's __index")
  eq(dd:respondsToSelector("alertViewTitle"), false)
  eq(dd:respondsToSelector("notInTheProtocol"), false)
end)

test("one dynamic delegate per object and protocol", function()
  local Other = bk.protocol("TestOtherDelegate", { ping = {} })
  local obj = {}
  local dd = bk.dynamicDelegateForProtocol(obj, AlertDelegate)
  eq(bk.dynamicDelegateForProtocol(obj, AlertDelegate), dd)
  eq(bk.dynamicDelegateForProtocol(obj, "TestAlertViewDelegate"), dd, "by name")
  local other = bk.dynamicDelegateForProtocol(obj, Other)
  ok(other ~= dd)
  ok(bk.dynamicDelegateForProtocol({}, AlertDelegate) ~= dd, "another object")
  eq(dd.protocol, AlertDelegate)
  eq(other.protocol, Other)
end)

test("the dynamic delegate does not keep its object alive", function()
  local weak = setmetatable({}, { __mode = "k" })
  do
    local obj = {}
    local dd = bk.dynamicDelegateForProtocol(obj, AlertDelegate)
    dd:implementMethod("alertViewTitle", function() return obj end)  -- even a block capturing obj
    weak[obj] = true
  end
  collectgarbage()
  collectgarbage()
  eq(next(weak), nil)
end)

test("the real delegate is weak: collectgarbage() releases it", function()
  local dd = bk.dynamicDelegateForProtocol({}, AlertDelegate)
  dd.realDelegate = { alertViewTitle = function() return "real" end }
  collectgarbage()
  collectgarbage()
  eq(dd.realDelegate, nil)
  eq(dd:alertViewTitle(), "untitled")
end)

test("assigning the dynamic delegate as its own real delegate changes nothing", function()
  local dd = bk.dynamicDelegateForProtocol({}, AlertDelegate)
  local real = { alertViewTitle = function() return "real" end }
  dd.realDelegate = real
  dd.realDelegate = dd
  eq(dd.realDelegate, real)
  eq(dd:alertViewTitle(), "real")
end)

test("calling a method not in the protocol is a clear error", function()
  local dd = bk.dynamicDelegateForProtocol({}, AlertDelegate)
  local err = raises("'alertViewDidExplode' is not a method of protocol 'TestAlertViewDelegate'",
    function() dd:alertViewDidExplode() end)
  ok(err:find("test_dynamic_delegates.lua:%d+:"), "with the caller's position: " .. err)
  raises("bad argument #2 to 'implementMethod' ('nope' is not a method of protocol 'TestAlertViewDelegate')",
    function() bk.implementMethod(dd, "nope", print) end)
  raises("bad argument #3 to 'implementMethod' (function expected, got number)",
    function() bk.implementMethod(dd, "alertViewTitle", 5) end)
  raises("bad argument #2 to 'implementMethod' (function expected, got number)",
    function() dd:implementMethod("alertViewTitle", 5) end)
  raises("bad argument #1 to 'implementMethod' (bk.DynamicDelegate expected, got table)",
    function() bk.implementMethod({}, "alertViewTitle", print) end)
  raises("cannot set field 'alertViewTitle' of bk.DynamicDelegate (use implementMethod)",
    function() dd.alertViewTitle = print end)
  raises("a real delegate must be a table or userdata, got number", function() dd.realDelegate = 5 end)
end)

test("errors in a block reach the caller of the delegate method", function()
  local dd = bk.dynamicDelegateForProtocol({}, AlertDelegate)
  dd:implementMethod("alertViewTitle", function() error("kaboom") end)
  raises("kaboom", function() dd:alertViewTitle() end)
end)

test("bk.* and bk_ forms of the delegate methods are the same functions", function()
  local dd = bk.dynamicDelegateForProtocol({}, AlertDelegate)
  eq(dd.implementMethod, bk.implementMethod)
  eq(dd.bk_implementMethod, bk.implementMethod)
  eq(dd.bk_respondsToSelector, bk.respondsToSelector)
  bk.implementMethod(dd, "alertViewTitle", function() return 1 end)
  eq(dd:alertViewTitle(), 1)
  ok(tostring(dd):find("bk.DynamicDelegate (TestAlertViewDelegate)", 1, true))
end)

test("bk.protocol validates its arguments and looks protocols up by name", function()
  eq(bk.protocol("TestAlertViewDelegate"), AlertDelegate)
  raises("bad argument #1 to 'protocol' (unknown protocol 'NoSuchDelegate')", bk.protocol, "NoSuchDelegate")
  raises("bad argument #2 to 'protocol' (combine of 'm' must be \"and\" or \"or\")",
    bk.protocol, "Bad", { m = { combine = "xor" } })
  raises("bad argument #2 to 'protocol' (method 'm' must be described by a table or true)",
    bk.protocol, "Bad", { m = 5 })
  raises("bad argument #2 to 'dynamicDelegateForProtocol' (unknown protocol 'Nope')",
    bk.dynamicDelegateForProtocol, {}, "Nope")
  raises("bad argument #1 to 'dynamicDelegateForProtocol' (table or userdata expected, got number)",
    bk.dynamicDelegateForProtocol, 5, AlertDelegate)
  raises("bad argument #1 to 'dynamicDelegate' (table or userdata expected, got number)", bk.dynamicDelegate, 5)
  raises("bad argument #1 to 'dynamicDataSource' (table or userdata expected, got no value)", bk.dynamicDataSource)
  local list = bk.protocol("TestListDelegate", { "a:b:", "c" })
  ok(list.methods.aB and list.methods.c)
end)

-- NSObject+A2DynamicDelegate: dynamicDelegate / dynamicDataSource -----------------------------

test("dynamicDelegate and dynamicDataSource find the protocol by the class's __name", function()
  bk.protocol("TestTableViewDelegate", { tableViewDidSelectRowAtIndexPath = {} })
  bk.protocol("TestTableViewDataSource", { tableViewNumberOfRowsInSection = { returns = 0 } })
  local TableView = { __name = "TestTableView" }
  TableView.__index = TableView
  local view = setmetatable({}, TableView)
  local dd, ds = bk.dynamicDelegate(view), bk.dynamicDataSource(view)
  eq(dd.protocol.name, "TestTableViewDelegate")
  eq(ds.protocol.name, "TestTableViewDataSource")
  eq(bk.dynamicDelegate(view), dd)
  eq(ds:tableViewNumberOfRowsInSection(view, 0), 0)
  raises("no delegate protocol known for this object", bk.dynamicDelegate, {})
end)

-- NSObject+A2BlockDelegate on Lua classes ------------------------------------------------------

local function makeAlertClass()
  local Alert = {}
  Alert.__index = Alert
  function Alert.new(title) return setmetatable({ title = title }, Alert) end
  function Alert:show()
    -- What a delegating object does: ask its delegate.
    self.delegate:willPresentAlertView(self)
    return self.delegate:alertViewTitle(self)
  end
  function Alert:click(i) return self.delegate:alertViewClickedButtonAtIndex(self, i) end
  return Alert
end

test("registerDynamicDelegate: obj.delegate is the dynamic delegate, assigning sets the real one", function()
  local Alert = makeAlertClass()
  bk.registerDynamicDelegate(Alert, AlertDelegate)
  local alert = Alert.new("hello")
  local dd = alert.delegate
  eq(dd, bk.dynamicDelegateForProtocol(alert, AlertDelegate))
  eq(bk.dynamicDelegate(alert), dd, "the class's registered protocol")
  local real = { alertViewTitle = function(self, a) return "real " .. a.title end }
  alert.delegate = real
  eq(alert.delegate, dd, "reading still gives the dynamic delegate")
  eq(dd.realDelegate, real)
  eq(alert:show(), "real hello")
  alert.delegate = alert.delegate
  eq(dd.realDelegate, real, "obj.delegate = obj.delegate changes nothing")
  alert.delegate = nil
  eq(dd.realDelegate, nil)
  eq(alert:show(), "untitled")
end)

test("registerDynamicDelegate keeps the class's own methods, fields and inheritance", function()
  local Base = {}
  function Base:describe() return "base " .. self.title end
  local Alert = setmetatable(makeAlertClass(), { __index = Base })
  bk.registerDynamicDelegate(Alert, AlertDelegate)
  local alert = Alert.new("t")
  eq(alert:describe(), "base t")
  eq(alert.title, "t")
  alert.other = 5
  eq(rawget(alert, "other"), 5, "other fields are plain raw fields")
  eq(alert.missing, nil)
  eq(type(alert.show), "function")
  eq(alert.delegate.protocol, AlertDelegate)
end)

test("registerDynamicDelegate with another property name, next to delegate", function()
  bk.protocol("TestPickerDataSource", { pickerViewNumberOfComponents = { returns = 1 } })
  local Picker = makeAlertClass()
  bk.registerDynamicDelegate(Picker, AlertDelegate)
  bk.registerDynamicDelegate(Picker, "TestPickerDataSource", "dataSource")
  local picker = Picker.new("p")
  eq(picker.dataSource:pickerViewNumberOfComponents(picker), 1)
  ok(picker.delegate ~= picker.dataSource)
  eq(bk.dynamicDataSource(picker), picker.dataSource)
end)

test("registerDynamicDelegate on a plain object and on a metatable with a function __index", function()
  local obj = { title = "solo" }
  bk.registerDynamicDelegate(obj, AlertDelegate)
  eq(obj.delegate, bk.dynamicDelegateForProtocol(obj, AlertDelegate))
  local lookups = 0
  local meta = { __index = function(t, k) lookups = lookups + 1 return "dyn " .. k end }
  bk.registerDynamicDelegate(meta, AlertDelegate)
  local inst = setmetatable({}, meta)
  eq(inst.anything, "dyn anything")
  eq(lookups, 1)
  eq(inst.delegate.protocol, AlertDelegate)
  eq(lookups, 1, "delegate is answered first")
end)

test("linkDelegateMethods: block properties implement delegate methods", function()
  local Alert = makeAlertClass()
  bk.registerDynamicDelegate(Alert, AlertDelegate)
  bk.linkDelegateMethods(Alert, {
    bk_willShowBlock = "willPresentAlertView",
    bk_clickedBlock = "alertView:clickedButtonAtIndex:",
  })
  local alert = Alert.new("linked")
  local shown
  local f = function(a) shown = a end
  alert.bk_willShowBlock = f
  eq(alert.bk_willShowBlock, f)
  eq(alert.delegate:blockImplementationForMethod("willPresentAlertView"), f)
  alert:show()
  eq(shown, alert)
  alert.bk_clickedBlock = function(a, i) return i + 1 end
  eq(alert:click(41), 42)
  -- A real delegate still gets what no block handles.
  alert.delegate = { alertViewTitle = function() return "from real" end }
  local keep = alert.delegate.realDelegate
  eq(alert:show(), "from real")
  alert.bk_clickedBlock = nil
  eq(alert.delegate:respondsToSelector("alertViewClickedButtonAtIndex"), false)
  raises("bad argument #2 to 'bk_clickedBlock' (function expected, got number)",
    function() alert.bk_clickedBlock = 5 end)
  local other = Alert.new("other")
  eq(other.bk_willShowBlock, nil, "per instance")
  ok(keep)
end)

test("linkDelegateMethods checks its arguments", function()
  local Alert = makeAlertClass()
  raises("call registerDynamicDelegate first", bk.linkDelegateMethods, Alert, { bk_x = "willPresentAlertView" })
  bk.registerDynamicDelegate(Alert, AlertDelegate)
  raises("'nope' is not a method of protocol 'TestAlertViewDelegate'", bk.linkDelegateMethods, Alert, { bk_x = "nope" })
  raises("bad argument #2 to 'linkDelegateMethods' (table expected, got no value)", bk.linkDelegateMethods, Alert)
end)

-- bk.XMLParser: Foundation's XMLParser with a dynamic XMLParserDelegate --------------------------

local document = [==[<?xml version="1.0" encoding="UTF-8"?>
<library name="city">
  <!-- the shelves -->
  <shelf id="1" floor="ground">
    <book isbn="42">Dune</book>
    <book isbn="7"><![CDATA[<Cats> & Dogs]]></book>
  </shelf>
  <?index rebuild?>
  <shelf id="2"/>
</library>]==]

-- Builds a tree {name, attrs, children..., text} from the parser's events, with blocks only.
local function treeBuilder(p)
  local root = { children = {} }
  local stack = { root }
  local dd = p.delegate
  dd:implementMethod("parser:didStartElement:namespaceURI:qualifiedName:attributes:",
    function(parser, name, uri, qname, attributes)
      eq(parser, p, "the parser comes first")
      local node = { name = name, attributes = attributes, children = {}, text = "" }
      local parent = stack[#stack]
      parent.children[#parent.children + 1] = node
      stack[#stack + 1] = node
    end)
  dd:implementMethod("parserFoundCharacters", function(parser, s)
    local node = stack[#stack]
    node.text = (node.text or "") .. s
  end)
  dd:implementMethod("parserFoundCDATA", function(parser, s)
    local node = stack[#stack]
    node.text = node.text .. s
  end)
  dd:implementMethod("parserDidEndElement", function(parser, name)
    eq(stack[#stack].name, name, "ends the element it started")
    stack[#stack] = nil
  end)
  return root
end

test("XMLParser parses nested elements, attributes, text and CDATA through blocks", function()
  local p = bk.XMLParser(document)
  local root = treeBuilder(p)
  eq(p:parse(), true)
  eq(p.parserError, nil)
  local library = root.children[1]
  eq(library.name, "library")
  eq(library.attributes.name, "city")
  eq(#library.children, 2)
  local shelf = library.children[1]
  deepEq(shelf.attributes, { id = "1", floor = "ground" })
  eq(#shelf.children, 2)
  eq(shelf.children[1].text, "Dune")
  eq(shelf.children[1].attributes.isbn, "42")
  eq(shelf.children[2].text, "<Cats> & Dogs")
  eq(library.children[2].attributes.id, "2")
  eq(#library.children[2].children, 0)
end)

test("XMLParser: comments, processing instructions, document start and end", function()
  local p = bk.XMLParser(document)
  local events = {}
  local dd = p.delegate
  dd:implementMethod("parserDidStartDocument", function(parser) events[#events + 1] = "start" end)
  dd:implementMethod("parserFoundComment", function(parser, c) events[#events + 1] = "comment" .. c end)
  dd:implementMethod("parser:foundProcessingInstructionWithTarget:data:",
    function(parser, target, data) events[#events + 1] = "pi " .. target .. " " .. data end)
  dd:implementMethod("parserDidEndDocument", function(parser) events[#events + 1] = "end" end)
  eq(p:parse(), true)
  deepEq(events, { "start", "comment the shelves ", "pi index rebuild", "end" })
end)

test("XMLParser: a real delegate gets what no block handles; blocks win", function()
  local p = bk.XMLParser("<a><b>x</b><c/></a>")
  local Collector = {}
  Collector.__index = Collector
  function Collector:parserDidStartElement(parser, name) self.started[#self.started + 1] = name end
  function Collector:parserDidEndElement(parser, name) self.ended[#self.ended + 1] = name end
  local real = setmetatable({ started = {}, ended = {} }, Collector)
  p.delegate = real
  eq(p.delegate.realDelegate, real)
  local ends = 0
  p.delegate:implementMethod("parserDidEndElement", function() ends = ends + 1 end)
  eq(p:parse(), true)
  deepEq(real.started, { "a", "b", "c" })
  deepEq(real.ended, { "b", "c", "a" }, "both the real delegate and the block are called")
  eq(ends, 3)
  eq(p.delegate, bk.dynamicDelegate(p), "dynamicDelegate knows the parser's protocol")
  eq(p.delegate.protocol, bk.protocol("XMLParserDelegate"))
end)

test("XMLParser: a malformed document gives false, parserError and parserParseErrorOccurred", function()
  for _, doc in ipairs({ "<a><b></a>", "<a x=1/>", "<a>&nope;</a>", "<a>", "" }) do
    local p = bk.XMLParser(doc)
    local reported, code
    p.delegate:implementMethod("parserParseErrorOccurred", function(parser, message, c)
      reported = reported or message
      code = code or c
    end)
    eq(p:parse(), false, doc)
    eq(type(p.parserError), "string", doc)
    eq(reported, p.parserError, doc)
    eq(math.type(code), "integer", doc)
  end
  local p = bk.XMLParser("<a><b></a>")
  eq(p:parse(), false)
  ok(p.parserError:find("tag name mismatch (76)", 1, true), p.parserError)
  eq(p.lineNumber, 1)
end)

test("XMLParser: an error in a delegate method stops the parse and is raised by parse()", function()
  local p = bk.XMLParser(document)
  local starts = 0
  p.delegate:implementMethod("parserDidStartElement", function(parser, name)
    starts = starts + 1
    if name == "shelf" then error("no shelves allowed") end
  end)
  local err = raises("no shelves allowed", p.parse, p)
  ok(err:match("^Tests/lua/test_dynamic_delegates%.lua:%d+: no shelves allowed$"), "unchanged: " .. err)
  eq(starts, 2, "no further events after the error")
  -- A real delegate's error too, and the parser can parse again afterwards.
  p.delegate:removeBlockImplementationForMethod("parserDidStartElement")
  local real = { parserFoundCDATA = function() error({ code = 7 }) end }
  p.delegate = real
  local okParse, value = pcall(p.parse, p)
  eq(okParse, false)
  eq(type(value), "table", "non-string error values pass unchanged")
  eq(value.code, 7)
  p.delegate = nil
  eq(p:parse(), true)
end)

test("XMLParser: abortParsing from a block; no nested parse", function()
  local p = bk.XMLParser(document)
  local seen = {}
  p.delegate:implementMethod("parserDidStartElement", function(parser, name)
    seen[#seen + 1] = name
    raises("parse already in progress", parser.parse, parser)
    if name == "shelf" then parser:abortParsing() end
  end)
  eq(p:parse(), false)
  deepEq(seen, { "library", "shelf" })
  ok(p.parserError)
end)

test("XMLParser: namespaces", function()
  local xml = [[<r xmlns="urn:root" xmlns:x="urn:x"><x:item/></r>]]
  local p = bk.XMLParser(xml)
  local seen = {}
  p.delegate:implementMethod("parserDidStartElement", function(parser, name, uri, qname)
    seen[#seen + 1] = table.concat({ name, uri or "-", qname or "-" }, " ")
  end)
  p.shouldProcessNamespaces = true
  eq(p.shouldProcessNamespaces, true)
  eq(p:parse(), true)
  deepEq(seen, { "r urn:root r", "item urn:x x:item" })
end)

test("XMLParser checks its arguments", function()
  raises("bad argument #1 to 'XMLParser' (string expected, got nil)", bk.XMLParser, nil)
  local p = bk.XMLParser("<a/>")
  raises("bk.XMLParser expected", p.parse, {})
  raises("a real delegate must be a table or userdata, got number", function() p.delegate = 3 end)
  raises("'parserExploded' is not a method of protocol 'XMLParserDelegate'", function() p.delegate:parserExploded() end)
  ok(tostring(p):find("^bk.XMLParser: "))
end)

test("cached dispatchers follow changes of blocks and real delegate", function()
  local dd = bk.dynamicDelegateForProtocol({}, AlertDelegate)
  eq(dd:alertViewTitle(), "untitled")
  dd:implementMethod("alertViewTitle", function(a, b) return (a or "") .. (b or "") end)
  eq(dd:alertViewTitle("x", "y", "z"), "xy", "a block gets the arguments it declares")
  dd:implementMethod("alertViewTitle", function(...) return select("#", ...) end)
  eq(dd:alertViewTitle(1, nil, 3, nil), 4, "a vararg block gets every argument")
  dd:implementMethod("alertViewTitle", function(a, b, c, d, e, f, g) return g end)
  eq(dd:alertViewTitle(1, 2, 3, 4, 5, 6, 7), 7, "many parameters")
  dd:implementMethod("alertViewTitle", string.rep)
  eq(dd:alertViewTitle("ab", 2), "abab", "a C function block")
  dd:implementMethod("alertViewTitle", function() end)
  eq(dd:alertViewTitle(), "untitled", "nil answer, default")
  local real = { alertViewTitle = function() return "real" end }
  dd.realDelegate = real
  eq(dd:alertViewTitle(), "real")
  dd:removeBlockImplementationForMethod("alertViewTitle")
  dd.realDelegate = nil
  eq(dd:alertViewTitle(), "untitled")
  -- combine with only a block answers the block's answer, even nil
  dd:implementMethod("alertViewShouldEnableFirstOtherButton", function(x) return x end)
  eq(dd:alertViewShouldEnableFirstOtherButton(false), false)
  eq(dd:alertViewShouldEnableFirstOtherButton(nil), nil)
end)

test("a redeclared protocol: obj.delegate and dynamicDelegate(obj) still agree", function()
  local first = bk.protocol("TestRedeclaredDelegate", { ping = {} })
  local Thing = {}
  Thing.__index = Thing
  bk.registerDynamicDelegate(Thing, "TestRedeclaredDelegate")
  local thing = setmetatable({}, Thing)
  eq(thing.delegate.protocol, first)
  local second = bk.protocol("TestRedeclaredDelegate", { ping = {}, pong = { returns = 1 } })
  eq(thing.delegate.protocol, second)
  eq(thing.delegate, bk.dynamicDelegate(thing))
  eq(thing.delegate:pong(), 1)
end)

test("registerDynamicDelegate hooks a class with a strict metatable without tripping it", function()
  local Strict = setmetatable({}, { __newindex = function(t, k) error("class is frozen: " .. k) end })
  rawset(Strict, "__index", Strict)
  rawset(Strict, "new", function() return setmetatable({}, Strict) end)
  rawset(Strict, "hello", function() return "hi" end)
  bk.registerDynamicDelegate(Strict, AlertDelegate)
  local s = Strict.new()
  eq(s:hello(), "hi")
  eq(s.delegate.protocol, AlertDelegate)
  s.field = 1
  eq(rawget(s, "field"), 1)
end)

test("a parser's delegate and its blocks do not keep the parser alive", function()
  local weak = setmetatable({}, { __mode = "k" })
  do
    local p = bk.XMLParser("<a/>")
    p.delegate:implementMethod("parserDidStartElement", function() return p end)
    p.delegate = { keep = p }
    weak[p] = true
  end
  collectgarbage()
  collectgarbage()
  eq(next(weak), nil)
end)

test("the delegate chunk's frames in a traceback name its file, bk/DelegateChunk.lua", function()
  local dd = bk.dynamicDelegateForProtocol({}, AlertDelegate)
  local trace
  dd.realDelegate = { willPresentAlertView = function() trace = debug.traceback("here", 1) end }
  dd:implementMethod("willPresentAlertView", function() end)
  dd:willPresentAlertView()
  ok(trace, "the real delegate ran")
  ok(trace:find("bk/DelegateChunk.lua:%d+:"), trace)
end)

test("a method description with an unknown field is refused (no silent optional method)", function()
  raises("bad argument #2 to 'protocol' (invalid option 'requried' in method 'ping'; expected required",
    bk.protocol, "TestMisspelledDelegate", { ping = { requried = true } })
  local p = bk.protocol("TestSpelledDelegate", { ping = { required = true, returns = 1, combine = "and" } })
  eq(p.methods.ping.required, true)
end)
