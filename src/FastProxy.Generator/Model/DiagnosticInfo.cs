using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Text;

namespace XCall.Generator.Model;

/// <summary>A diagnostic with an equatable location (no syntax tree held), so it can sit in a cached model.</summary>
internal sealed record DiagnosticInfo(string Id, string FilePath, TextSpan Span, LinePositionSpan LineSpan, EquatableArray<EquatableString> Arguments)
{
    public static DiagnosticInfo Create(DiagnosticDescriptor descriptor, Location? location, params string[] arguments)
    {
        FileLinePositionSpan line = location?.GetLineSpan() ?? default;
        return new DiagnosticInfo(
            descriptor.Id,
            location?.SourceTree?.FilePath ?? string.Empty,
            location?.SourceSpan ?? default,
            line.Span,
            new EquatableArray<EquatableString>(System.Linq.Enumerable.Select(arguments, a => new EquatableString(a))));
    }

    /// <summary>An error (not a warning): the contract it is reported on gets no generated code.</summary>
    public bool IsError => DiagnosticDescriptors.ById(Id).DefaultSeverity == DiagnosticSeverity.Error;

    public Diagnostic ToDiagnostic()
    {
        Location location = FilePath.Length == 0 ? Location.None : Location.Create(FilePath, Span, LineSpan);
        object[] args = new object[Arguments.Count];
        for (int i = 0; i < args.Length; i++)
        {
            args[i] = Arguments[i].Value;
        }
        return Diagnostic.Create(DiagnosticDescriptors.ById(Id), location, args);
    }
}

/// <summary>A string usable in <see cref="EquatableArray{T}"/>.</summary>
internal readonly record struct EquatableString(string Value);
