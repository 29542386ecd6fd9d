using System.Collections.Generic;
using System.Linq;
using System.Text;
using Microsoft.CodeAnalysis;
using XCall.Generator.Model;

namespace XCall.Generator;

public sealed partial class ProxyGenerator
{
    /// <summary>What the parser makes of one [Remotable] interface.</summary>
    internal sealed record ParseResult(ContractSpec? Contract, EquatableArray<DataTypeSpec> DataTypes, EquatableArray<DiagnosticInfo> Diagnostics);

    /// <summary>Turns symbols into the equatable model; reports what cannot be remoted.</summary>
    internal sealed class Parser
    {
        private static readonly SymbolDisplayFormat s_fullName = SymbolDisplayFormat.FullyQualifiedFormat;
        private static readonly SymbolDisplayFormat s_annotatedName = SymbolDisplayFormat.FullyQualifiedFormat
            .AddMiscellaneousOptions(SymbolDisplayMiscellaneousOptions.IncludeNullableReferenceTypeModifier);

        private readonly List<DiagnosticInfo> _diagnostics = [];
        private readonly Dictionary<string, DataTypeSpec?> _dataTypes = [];
        private readonly List<string> _dataOrder = [];

        public ParseResult Parse(INamedTypeSymbol iface)
        {
            Location? location = iface.Locations.FirstOrDefault();
            string display = iface.ToDisplayString();
            if (iface.IsGenericType)
            {
                _diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.GenericInterface, location, display));
                return Result(null);
            }

            var methods = new List<MethodSpec>();
            var seenIds = new Dictionary<uint, string>();
            foreach (INamedTypeSymbol declaring in new[] { iface }.Concat(iface.AllInterfaces))
            {
                foreach (ISymbol member in declaring.GetMembers())
                {
                    if (member is IMethodSymbol { MethodKind: MethodKind.Ordinary, IsStatic: false, IsAbstract: true } method)
                    {
                        MethodSpec? spec = ParseMethod(method, declaring, display);
                        if (spec is null)
                        {
                            continue;
                        }
                        if (seenIds.TryGetValue(spec.Id, out string? other))
                        {
                            _diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.MethodIdCollision, method.Locations.FirstOrDefault(), other, spec.Signature, display, spec.Id.ToString("x8")));
                            continue;
                        }
                        seenIds[spec.Id] = spec.Signature;
                        methods.Add(spec);
                    }
                    else if (member is IMethodSymbol { MethodKind: MethodKind.PropertyGet or MethodKind.PropertySet or MethodKind.EventAdd or MethodKind.EventRemove })
                    {
                        // Reported once on the property or event itself.
                    }
                    else if (member.IsAbstract || member is IPropertySymbol or IEventSymbol)
                    {
                        _diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.NotAMethod, member.Locations.FirstOrDefault(), member.Name, display));
                    }
                }
            }

            if (_diagnostics.Count > 0)
            {
                // A proxy without the rejected members would not compile: the reported error is the only one to see.
                return Result(null);
            }

            var hashText = new StringBuilder(display).Append('\n');
            foreach (string signature in methods.Select(m => m.Signature).OrderBy(s => s, System.StringComparer.Ordinal))
            {
                hashText.Append(signature).Append('\n');
            }
            foreach (DataTypeSpec data in _dataTypes.Values.Where(d => d is not null).OrderBy(d => d!.FullName, System.StringComparer.Ordinal)!)
            {
                hashText.Append(data.FullName).Append('{');
                foreach (MemberSpec m in data.Members)
                {
                    hashText.Append(m.Name).Append(':').Append(m.Type.FullName).Append(',');
                }
                hashText.Append("}\n");
            }

            var contract = new ContractSpec(
                iface.ToDisplayString(s_fullName),
                display,
                Identifier(iface),
                Fnv.Hash64(hashText.ToString()),
                new EquatableArray<MethodSpec>(methods));
            return Result(contract);
        }

        private ParseResult Result(ContractSpec? contract) => new(
            contract,
            new EquatableArray<DataTypeSpec>(_dataOrder.Select(n => _dataTypes[n]).Where(d => d is not null)!),
            new EquatableArray<DiagnosticInfo>(_diagnostics));

        private MethodSpec? ParseMethod(IMethodSymbol method, INamedTypeSymbol declaring, string owner)
        {
            Location? location = method.Locations.FirstOrDefault();
            string name = method.Name;
            int errors = _diagnostics.Count;
            if (method.IsGenericMethod)
            {
                _diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.GenericMethod, location, name, owner));
                return null;
            }

            bool oneWay = method.GetAttributes().Any(a => a.AttributeClass?.ToDisplayString() == "XCall.OneWayAttribute");
            ITypeSymbol returnType = method.ReturnType;
            string returnName = returnType.ToDisplayString(s_annotatedName);
            ReturnKind kind;
            TypeSpec? result = null;
            string original = returnType.OriginalDefinition.ToDisplayString();
            if (returnType.SpecialType == SpecialType.System_Void)
            {
                kind = ReturnKind.Void;
            }
            else if (original == "System.Threading.Tasks.Task")
            {
                kind = ReturnKind.Task;
            }
            else if (original == "System.Threading.Tasks.ValueTask")
            {
                kind = ReturnKind.ValueTask;
            }
            else if (original is "System.Threading.Tasks.Task<TResult>" or "System.Threading.Tasks.ValueTask<TResult>")
            {
                kind = original.StartsWith("System.Threading.Tasks.Task", System.StringComparison.Ordinal) ? ReturnKind.TaskOfT : ReturnKind.ValueTaskOfT;
                result = MapType(((INamedTypeSymbol)returnType).TypeArguments[0], "Result", name, location);
            }
            else
            {
                kind = ReturnKind.Value;
                result = MapType(returnType, "Return value", name, location);
            }
            bool isAsync = kind is ReturnKind.Task or ReturnKind.TaskOfT or ReturnKind.ValueTask or ReturnKind.ValueTaskOfT;

            var parameters = new List<ParameterSpec>();
            var signature = new StringBuilder(name).Append('(');
            int tokens = 0;
            int wireParameters = 0;
            bool hasRef = false;
            foreach (IParameterSymbol p in method.Parameters)
            {
                Location? pLocation = p.Locations.FirstOrDefault() ?? location;
                string declared = p.Type.ToDisplayString(s_annotatedName);
                if (p.Type.ToDisplayString() == "System.Threading.CancellationToken")
                {
                    tokens++;
                    parameters.Add(new ParameterSpec(p.Name, null, ParameterMode.CancellationToken, declared));
                    continue;
                }
                ParameterMode mode = p.RefKind switch
                {
                    RefKind.Ref => ParameterMode.Ref,
                    RefKind.Out => ParameterMode.Out,
                    RefKind.In or RefKind.RefReadOnlyParameter => ParameterMode.ReadOnlyRef,
                    _ => ParameterMode.In,
                };
                if (mode is ParameterMode.Ref or ParameterMode.Out)
                {
                    hasRef = true;
                    if (isAsync)
                    {
                        _diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.RefInAsync, pLocation, name, p.Name));
                    }
                }
                TypeSpec? type = MapType(p.Type, $"Parameter '{p.Name}'", name, pLocation);
                if (type is { Kind: WireKind.ReadOnlySpan or WireKind.Span } && (isAsync || oneWay))
                {
                    _diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.SpanInAsync, pLocation, name, p.Name));
                }
                if (wireParameters++ > 0)
                {
                    signature.Append(',');
                }
                signature.Append(mode switch { ParameterMode.Ref => "ref ", ParameterMode.Out => "out ", ParameterMode.ReadOnlyRef => "in ", _ => "" })
                    .Append(p.Type.ToDisplayString(s_fullName));
                parameters.Add(new ParameterSpec(p.Name, type, mode, declared));
            }
            signature.Append(")->").Append(returnType.ToDisplayString(s_fullName));
            if (oneWay)
            {
                signature.Append(" oneway");
                if (kind != ReturnKind.Void || hasRef || tokens > 0)
                {
                    _diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.OneWayNotVoid, location, name));
                }
            }
            if (tokens > 1)
            {
                _diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.TooManyTokens, location, name));
            }
            if (_diagnostics.Count != errors)
            {
                return null;
            }
            string text = signature.ToString();
            return new MethodSpec(name, Fnv.Hash32(text), text, declaring.ToDisplayString(s_fullName), kind, returnName, result, oneWay, new EquatableArray<ParameterSpec>(parameters));
        }

        private TypeSpec? MapType(ITypeSymbol type, string what, string owner, Location? location)
        {
            string? reason = null;
            TypeSpec? spec = TryMap(type, ref reason, location);
            if (spec is null)
            {
                _diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.UnsupportedType, location, what, owner, type.ToDisplayString(), reason ?? "unsupported type"));
            }
            return spec;
        }

        private TypeSpec? TryMap(ITypeSymbol type, ref string? reason, Location? location)
        {
            string full = type.ToDisplayString(s_annotatedName);
            string plain = type.WithNullableAnnotation(NullableAnnotation.NotAnnotated).ToDisplayString(s_fullName);
            if (type is IPointerTypeSymbol or IFunctionPointerTypeSymbol)
            {
                reason = "pointers have no meaning in another process; pass the values or an array";
                return null;
            }
            if (type.SpecialType == SpecialType.System_String)
            {
                return new TypeSpec(full, WireKind.String, null, "global::XCall.Marshal.StringMarshaller");
            }
            if (type is INamedTypeSymbol { OriginalDefinition.SpecialType: SpecialType.System_Nullable_T } nullable)
            {
                ITypeSymbol inner = nullable.TypeArguments[0];
                string innerName = inner.ToDisplayString(s_fullName);
                if (inner.IsUnmanagedType)
                {
                    return new TypeSpec(full, WireKind.Marshalled, innerName, $"global::XCall.Marshal.NullableMarshaller<{innerName}>");
                }
                TypeSpec? innerSpec = TryMap(inner, ref reason, location);
                return innerSpec is null ? null : new TypeSpec(full, WireKind.Marshalled, null, $"global::XCall.Marshal.NullableValueMarshaller<{innerName}, {innerSpec.Marshaller}>");
            }
            if (type.IsUnmanagedType && type.TypeKind != Microsoft.CodeAnalysis.TypeKind.TypeParameter)
            {
                return new TypeSpec(full, WireKind.Unmanaged, null, $"global::XCall.Marshal.UnmanagedMarshaller<{plain}>");
            }
            if (type is IArrayTypeSymbol array)
            {
                if (array.Rank != 1)
                {
                    reason = "only one-dimensional arrays are supported; use a jagged array or a flat array with its dimensions";
                    return null;
                }
                ITypeSymbol element = array.ElementType;
                string elementPlain = element.WithNullableAnnotation(NullableAnnotation.NotAnnotated).ToDisplayString(s_fullName);
                if (element.IsUnmanagedType && element.TypeKind != Microsoft.CodeAnalysis.TypeKind.TypeParameter)
                {
                    return new TypeSpec(full, WireKind.UnmanagedArray, elementPlain, $"global::XCall.Marshal.UnmanagedArrayMarshaller<{elementPlain}>");
                }
                TypeSpec? elementSpec = TryMap(element, ref reason, location);
                return elementSpec is null ? null : new TypeSpec(full, WireKind.Marshalled, null, $"global::XCall.Marshal.ArrayMarshaller<{elementPlain}, {elementSpec.Marshaller}>");
            }
            if (type is INamedTypeSymbol named)
            {
                string definition = named.OriginalDefinition.ToDisplayString();
                switch (definition)
                {
                    case "System.Collections.Generic.List<T>":
                    {
                        ITypeSymbol element = named.TypeArguments[0];
                        string elementPlain = element.WithNullableAnnotation(NullableAnnotation.NotAnnotated).ToDisplayString(s_fullName);
                        if (element.IsUnmanagedType)
                        {
                            return new TypeSpec(full, WireKind.UnmanagedList, elementPlain, $"global::XCall.Marshal.UnmanagedListMarshaller<{elementPlain}>");
                        }
                        TypeSpec? elementSpec = TryMap(element, ref reason, location);
                        return elementSpec is null ? null : new TypeSpec(full, WireKind.Marshalled, null, $"global::XCall.Marshal.ListMarshaller<{elementPlain}, {elementSpec.Marshaller}>");
                    }
                    case "System.Collections.Generic.Dictionary<TKey, TValue>":
                    {
                        ITypeSymbol key = named.TypeArguments[0];
                        ITypeSymbol value = named.TypeArguments[1];
                        TypeSpec? keySpec = TryMap(key, ref reason, location);
                        TypeSpec? valueSpec = keySpec is null ? null : TryMap(value, ref reason, location);
                        if (keySpec is null || valueSpec is null)
                        {
                            return null;
                        }
                        string k = key.WithNullableAnnotation(NullableAnnotation.NotAnnotated).ToDisplayString(s_fullName);
                        string v = value.WithNullableAnnotation(NullableAnnotation.NotAnnotated).ToDisplayString(s_fullName);
                        return new TypeSpec(full, WireKind.Marshalled, null, $"global::XCall.Marshal.DictionaryMarshaller<{k}, {keySpec.Marshaller}, {v}, {valueSpec.Marshaller}>");
                    }
                    case "System.ReadOnlyMemory<T>":
                    case "System.ReadOnlySpan<T>":
                    case "System.Span<T>":
                    {
                        ITypeSymbol element = named.TypeArguments[0];
                        if (!element.IsUnmanagedType)
                        {
                            reason = "spans and memory are supported for unmanaged element types; use an array or List<T>";
                            return null;
                        }
                        string e = element.ToDisplayString(s_fullName);
                        WireKind kind = definition switch
                        {
                            "System.ReadOnlyMemory<T>" => WireKind.UnmanagedMemory,
                            "System.ReadOnlySpan<T>" => WireKind.ReadOnlySpan,
                            _ => WireKind.Span,
                        };
                        return new TypeSpec(full, kind, e, $"global::XCall.Marshal.UnmanagedMemoryMarshaller<{e}>");
                    }
                }
                return MapDataType(named, full, ref reason, location);
            }
            reason = "use a class, struct or record with public fields or properties, a primitive, a string, or a collection of those";
            return null;
        }

        private TypeSpec? MapDataType(INamedTypeSymbol type, string full, ref string? reason, Location? location)
        {
            if (type.TypeKind is not (Microsoft.CodeAnalysis.TypeKind.Class or Microsoft.CodeAnalysis.TypeKind.Struct))
            {
                reason = type.TypeKind == Microsoft.CodeAnalysis.TypeKind.Interface
                    ? "interfaces cannot be created from the wire; pass a concrete data type"
                    : "use a class, struct or record with public fields or properties";
                return null;
            }
            if (type.IsAbstract || type.IsStatic)
            {
                reason = "abstract types cannot be created from the wire; pass a concrete data type";
                return null;
            }
            if (type.IsGenericType)
            {
                reason = "generic data types are not supported; declare a non-generic type";
                return null;
            }
            if (type.SpecialType == SpecialType.System_Object || type.ContainingNamespace?.ToDisplayString() is string ns && (ns == "System" || ns.StartsWith("System.", System.StringComparison.Ordinal)))
            {
                reason = "framework types other than primitives, strings and the supported collections have no generated marshaller";
                return null;
            }
            if (type.DeclaredAccessibility is Accessibility.Private or Accessibility.Protected)
            {
                reason = "the type must be public or internal";
                return null;
            }
            string plain = type.WithNullableAnnotation(NullableAnnotation.NotAnnotated).ToDisplayString(s_fullName);
            string marshaller = $"global::XCall.Generated.{Identifier(type)}_XCallMarshaller";
            var spec = new TypeSpec(full, WireKind.Data, null, marshaller);
            if (_dataTypes.TryGetValue(plain, out DataTypeSpec? known))
            {
                return spec; // known, or in progress (a recursive type)
            }
            _dataTypes[plain] = null;

            var chain = new List<INamedTypeSymbol>();
            for (INamedTypeSymbol? t = type; t is not null && t.SpecialType != SpecialType.System_Object && t.SpecialType != SpecialType.System_ValueType; t = t.BaseType)
            {
                chain.Insert(0, t);
            }
            var candidates = new List<(string Name, ITypeSymbol Type, bool Settable)>();
            foreach (INamedTypeSymbol t in chain)
            {
                foreach (ISymbol member in t.GetMembers())
                {
                    if (member.IsStatic || member.DeclaredAccessibility != Accessibility.Public || member.IsImplicitlyDeclared)
                    {
                        continue;
                    }
                    if (member is IFieldSymbol { IsConst: false } field)
                    {
                        candidates.Add((field.Name, field.Type, !field.IsReadOnly));
                    }
                    else if (member is IPropertySymbol { IsIndexer: false, GetMethod: { DeclaredAccessibility: Accessibility.Public } } property)
                    {
                        bool settable = property.SetMethod is { DeclaredAccessibility: Accessibility.Public };
                        candidates.Add((property.Name, property.Type, settable));
                    }
                }
            }

            // Choose how to create the type: an object initializer when possible, else the public
            // constructor whose parameters all match members.
            IMethodSymbol? constructor = null;
            bool parameterless = type.IsValueType || type.InstanceConstructors.Any(c => c.DeclaredAccessibility == Accessibility.Public && c.Parameters.Length == 0);
            if (!parameterless || candidates.Any(c => !c.Settable))
            {
                constructor = type.InstanceConstructors
                    .Where(c => c.DeclaredAccessibility == Accessibility.Public && c.Parameters.Length > 0)
                    .Where(c => c.Parameters.All(p => candidates.Any(m => string.Equals(m.Name, p.Name, System.StringComparison.OrdinalIgnoreCase) && SymbolEqualityComparer.Default.Equals(m.Type.WithNullableAnnotation(NullableAnnotation.NotAnnotated), p.Type.WithNullableAnnotation(NullableAnnotation.NotAnnotated)))))
                    .OrderByDescending(c => c.Parameters.Length)
                    .FirstOrDefault();
                if (constructor is null && !parameterless)
                {
                    _diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.NoConstructor, type.Locations.FirstOrDefault() ?? location, type.ToDisplayString()));
                    reason = "see XCALL007";
                    return spec; // reported; keep going so one root cause gives one error
                }
            }

            var members = new List<MemberSpec>();
            foreach ((string name, ITypeSymbol memberType, bool settable) in candidates)
            {
                int index = constructor is null ? -1 : IndexOfParameter(constructor, name);
                if (index < 0 && !settable)
                {
                    continue; // computed or private-set member: not part of the data
                }
                string? memberReason = null;
                TypeSpec? memberSpec = TryMap(memberType, ref memberReason, location);
                if (memberSpec is null)
                {
                    _diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.UnsupportedType, location, $"Member '{name}'", type.ToDisplayString(), memberType.ToDisplayString(), memberReason ?? "unsupported type"));
                    continue;
                }
                members.Add(new MemberSpec(name, memberSpec, index));
            }
            _dataTypes[plain] = new DataTypeSpec(plain, marshaller, type.IsValueType, constructor?.Parameters.Length ?? 0, new EquatableArray<MemberSpec>(members));
            _dataOrder.Add(plain);
            return spec;
        }

        private static int IndexOfParameter(IMethodSymbol constructor, string name)
        {
            for (int i = 0; i < constructor.Parameters.Length; i++)
            {
                if (string.Equals(constructor.Parameters[i].Name, name, System.StringComparison.OrdinalIgnoreCase))
                {
                    return i;
                }
            }
            return -1;
        }

        internal static string Identifier(INamedTypeSymbol type)
        {
            string name = type.ToDisplayString(SymbolDisplayFormat.FullyQualifiedFormat).Replace("global::", "");
            var sb = new StringBuilder(name.Length);
            foreach (char c in name)
            {
                sb.Append(char.IsLetterOrDigit(c) ? c : '_');
            }
            return sb.ToString();
        }
    }
}
