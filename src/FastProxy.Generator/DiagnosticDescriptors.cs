using System;
using Microsoft.CodeAnalysis;

namespace XCall.Generator;

/// <summary>Every diagnostic the generator reports. Ids are stable; each message says what to do.</summary>
internal static class DiagnosticDescriptors
{
    private const string Category = "XCall";

    public static readonly DiagnosticDescriptor GenericMethod = new(
        "XCALL001", "Generic methods cannot be remoted",
        "Method '{0}' of [Remotable] interface '{1}' is generic; declare one method per concrete type instead",
        Category, DiagnosticSeverity.Error, isEnabledByDefault: true);

    public static readonly DiagnosticDescriptor UnsupportedType = new(
        "XCALL002", "Type cannot be marshalled",
        "{0} of '{1}' has type '{2}', which XCall cannot marshal: {3}",
        Category, DiagnosticSeverity.Error, isEnabledByDefault: true);

    public static readonly DiagnosticDescriptor OneWayNotVoid = new(
        "XCALL003", "[OneWay] method must return void",
        "[OneWay] method '{0}' must return void and have no ref, out or CancellationToken parameters; nothing comes back from a one-way call",
        Category, DiagnosticSeverity.Error, isEnabledByDefault: true);

    public static readonly DiagnosticDescriptor MethodIdCollision = new(
        "XCALL004", "Method ids collide",
        "Methods '{0}' and '{1}' of '{2}' hash to the same method id 0x{3}; rename one of them",
        Category, DiagnosticSeverity.Error, isEnabledByDefault: true);

    public static readonly DiagnosticDescriptor RefInAsync = new(
        "XCALL005", "ref / out parameter on an async method",
        "Method '{0}' returns a task and has ref or out parameter '{1}'; return the values in the task's result instead",
        Category, DiagnosticSeverity.Error, isEnabledByDefault: true);

    public static readonly DiagnosticDescriptor NotAMethod = new(
        "XCALL006", "Only methods can be remoted",
        "Member '{0}' of [Remotable] interface '{1}' is not an instance method; replace properties and events with methods (GetX / SetX)",
        Category, DiagnosticSeverity.Error, isEnabledByDefault: true);

    public static readonly DiagnosticDescriptor NoConstructor = new(
        "XCALL007", "Data type cannot be created",
        "Data type '{0}' needs a public parameterless constructor, or a public constructor whose parameters match its members by name and type",
        Category, DiagnosticSeverity.Error, isEnabledByDefault: true);

    public static readonly DiagnosticDescriptor GenericInterface = new(
        "XCALL008", "Generic [Remotable] interface",
        "[Remotable] interface '{0}' is generic; declare a non-generic interface per type argument",
        Category, DiagnosticSeverity.Error, isEnabledByDefault: true);

    public static readonly DiagnosticDescriptor SpanInAsync = new(
        "XCALL009", "Span parameter on an async or one-way method",
        "Method '{0}' uses span parameter '{1}', which can only be used by a synchronous method; use ReadOnlyMemory<T> or an array",
        Category, DiagnosticSeverity.Error, isEnabledByDefault: true);

    public static readonly DiagnosticDescriptor TooManyTokens = new(
        "XCALL010", "More than one CancellationToken",
        "Method '{0}' has more than one CancellationToken parameter; keep one",
        Category, DiagnosticSeverity.Error, isEnabledByDefault: true);

    public static readonly DiagnosticDescriptor DuplicateKnownType = new(
        "XCALL011", "Known type listed twice",
        "Known types of '{0}' collide: '{1}' cannot be listed because {2}; give each known type one entry with its own id",
        Category, DiagnosticSeverity.Error, isEnabledByDefault: true);

    public static readonly DiagnosticDescriptor KnownTypeNotDerived = new(
        "XCALL012", "Known type does not derive from the marked type",
        "Known type '{0}' of '{1}' is not a concrete class derived from it (or implementing it); list only concrete classes that can stand where '{1}' is declared",
        Category, DiagnosticSeverity.Error, isEnabledByDefault: true);

    public static readonly DiagnosticDescriptor BadRegisteredMarshaller = new(
        "XCALL013", "Registered marshaller does not marshal the type",
        "[XCallMarshaller] registers '{0}' for '{1}', but it is not a public or internal class implementing XCall.Marshal.IMarshaller<{1}>; implement that interface (static Write and Read)",
        Category, DiagnosticSeverity.Error, isEnabledByDefault: true);

    public static readonly DiagnosticDescriptor SpanIsInputOnly = new(
        "XCALL014", "Span parameter is input-only",
        "Parameter '{1}' of '{0}' is a Span<T>: its contents travel to the callee, but what the callee writes into them does not come back; declare it ReadOnlySpan<T> if it is input, or use a ref array or a return value to get data back",
        Category, DiagnosticSeverity.Warning, isEnabledByDefault: true);

    public static readonly DiagnosticDescriptor LongWaitNotAsync = new(
        "XCALL015", "[LongWait] on a method that is not awaited",
        "[LongWait] on '{0}' has no effect: only the calls of a method that returns a task, and is not [OneWay], are awaited rather than waited for on the calling thread",
        Category, DiagnosticSeverity.Warning, isEnabledByDefault: true);

    public static DiagnosticDescriptor ById(string id) => id switch
    {
        "XCALL001" => GenericMethod,
        "XCALL002" => UnsupportedType,
        "XCALL003" => OneWayNotVoid,
        "XCALL004" => MethodIdCollision,
        "XCALL005" => RefInAsync,
        "XCALL006" => NotAMethod,
        "XCALL007" => NoConstructor,
        "XCALL008" => GenericInterface,
        "XCALL009" => SpanInAsync,
        "XCALL010" => TooManyTokens,
        "XCALL011" => DuplicateKnownType,
        "XCALL012" => KnownTypeNotDerived,
        "XCALL013" => BadRegisteredMarshaller,
        "XCALL014" => SpanIsInputOnly,
        "XCALL015" => LongWaitNotAsync,
        _ => throw new ArgumentOutOfRangeException(nameof(id), id, "Unknown XCall diagnostic id."),
    };
}
