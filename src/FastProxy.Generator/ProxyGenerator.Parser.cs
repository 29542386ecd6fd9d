using System.Collections.Generic;
using System.Linq;
using System.Text;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp.Syntax;
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
        private Dictionary<string, string> _registered = [];
        private readonly SortedSet<string> _usedRegistrations = new(System.StringComparer.Ordinal);

        public ParseResult Parse(INamedTypeSymbol iface)
        {
            Location? location = iface.Locations.FirstOrDefault();
            string display = iface.ToDisplayString();
            _registered = RegisteredMarshallers(iface.ContainingAssembly);
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

            if (ErrorCount() > 0)
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
                hashText.Append(data.FullName).Append(' ').Append(data.Kind).Append('{');
                foreach (MemberSpec m in data.Members)
                {
                    hashText.Append(m.Name).Append(':').Append(m.Type.FullName).Append(',');
                }
                hashText.Append('}');
                foreach (KnownTypeSpec k in data.KnownTypes)
                {
                    hashText.Append(' ').Append(k.Id).Append('=').Append(k.FullName);
                }
                hashText.Append('\n');
            }
            foreach (string registration in _usedRegistrations)
            {
                hashText.Append(registration).Append('\n');
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

        /// <summary>Errors reported so far (warnings leave the generated code as it would be without them).</summary>
        private int ErrorCount() => _diagnostics.Count(d => d.IsError);

        private MethodSpec? ParseMethod(IMethodSymbol method, INamedTypeSymbol declaring, string owner)
        {
            Location? location = method.Locations.FirstOrDefault();
            string name = method.Name;
            int errors = ErrorCount();
            if (method.IsGenericMethod)
            {
                _diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.GenericMethod, location, name, owner));
                return null;
            }

            bool oneWay = method.GetAttributes().Any(a => a.AttributeClass?.ToDisplayString() == "XCall.OneWayAttribute");
            bool longWait = method.GetAttributes().Any(a => a.AttributeClass?.ToDisplayString() == "XCall.LongWaitAttribute");
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
            else if (original == AsyncEnumerableName)
            {
                kind = ReturnKind.AsyncEnumerable;
                result = MapType(returnType, "Return value", name, location);
            }
            else if (original is "System.Threading.Tasks.Task<TResult>" or "System.Threading.Tasks.ValueTask<TResult>")
            {
                kind = original.StartsWith("System.Threading.Tasks.Task", System.StringComparison.Ordinal) ? ReturnKind.TaskOfT : ReturnKind.ValueTaskOfT;
                result = InputOnly(MapType(((INamedTypeSymbol)returnType).TypeArguments[0], "Result", name, location), "Result", name, location, returnType);
            }
            else
            {
                kind = ReturnKind.Value;
                result = InputOnly(MapType(returnType, "Return value", name, location), "Return value", name, location, returnType);
            }
            // A stream's call is made when it is enumerated, after the method returned: like an async method's, its
            // arguments cannot be ref, out or spans.
            bool isAsync = ReturnKinds.IsTask(kind) || kind == ReturnKind.AsyncEnumerable;

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
                if (mode is ParameterMode.Ref or ParameterMode.Out)
                {
                    type = InputOnly(type, $"Parameter '{p.Name}'", name, pLocation, p.Type);
                }
                if (type is { Kind: WireKind.ReadOnlySpan or WireKind.Span or WireKind.Lent } && (isAsync || oneWay))
                {
                    _diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.SpanInAsync, pLocation, name, p.Name));
                }
                else if (type is { Kind: WireKind.Span } && mode == ParameterMode.In)
                {
                    _diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.SpanIsInputOnly, pLocation, name, p.Name));
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
            if (ErrorCount() != errors)
            {
                return null;
            }
            if (longWait && (oneWay || !ReturnKinds.IsTask(kind)))
            {
                // A hint to the caller's side only (not part of the signature): a method it does not fit keeps its calls as they are.
                _diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.LongWaitNotAsync, location, name));
                longWait = false;
            }
            string text = signature.ToString();
            return new MethodSpec(name, Fnv.Hash32(text), text, declaring.ToDisplayString(s_fullName), kind, returnName, result, oneWay, new EquatableArray<ParameterSpec>(parameters))
            {
                LongWait = longWait,
            };
        }

        /// <summary>A <see cref="WireKind.Lent"/> block only goes from caller to callee: as a result or a ref / out
        /// parameter it is an unsupported type.</summary>
        private TypeSpec? InputOnly(TypeSpec? spec, string what, string owner, Location? location, ITypeSymbol type)
        {
            if (spec is not { Kind: WireKind.Lent })
            {
                return spec;
            }
            _diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.UnsupportedType, location, what, owner, type.ToDisplayString(),
                "LentSpan<T> carries values from the caller to the callee only; return an array or ReadOnlyMemory<T>, or pass a ref array"));
            return null;
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

        private static string Plain(ITypeSymbol type) => type.WithNullableAnnotation(NullableAnnotation.NotAnnotated).ToDisplayString(s_fullName);

        private TypeSpec? TryMap(ITypeSymbol type, ref string? reason, Location? location)
        {
            string full = type.ToDisplayString(s_annotatedName);
            string plain = Plain(type);
            if (type is IPointerTypeSymbol or IFunctionPointerTypeSymbol)
            {
                reason = "pointers have no meaning in another process; pass the values or an array";
                return null;
            }
            if (_registered.TryGetValue(plain, out string? registered))
            {
                _usedRegistrations.Add(plain + " marshalled by " + registered);
                return new TypeSpec(full, WireKind.Marshalled, null, $"global::XCall.Marshal.RegisteredMarshaller<{plain}, {registered}>");
            }
            if (type is INamedTypeSymbol { TypeKind: Microsoft.CodeAnalysis.TypeKind.Interface, IsGenericType: false } remotable
                && remotable.GetAttributes().Any(a => a.AttributeClass?.ToDisplayString() == "XCall.RemotableAttribute"))
            {
                // Travels by reference: the receiver gets a proxy that calls back to the sender. It counts as an
                // object, so data holding one is copied across a load context through its marshaller, where the
                // reference gets a domain proxy instead of passing as it is.
                return new TypeSpec(full, WireKind.ObjectReference, null, $"global::XCall.Runtime.ObjectReferenceMarshaller<{plain}>", HasObjects: true);
            }
            if (type.SpecialType == SpecialType.System_String)
            {
                return new TypeSpec(full, WireKind.String, null, "global::XCall.Marshal.StringMarshaller");
            }
            if (type is INamedTypeSymbol { OriginalDefinition.SpecialType: SpecialType.System_Nullable_T } nullable)
            {
                ITypeSymbol inner = nullable.TypeArguments[0];
                string innerName = inner.ToDisplayString(s_fullName);
                if (inner.IsUnmanagedType && !_registered.ContainsKey(innerName))
                {
                    return new TypeSpec(full, WireKind.Marshalled, innerName, $"global::XCall.Marshal.NullableMarshaller<{innerName}>");
                }
                TypeSpec? innerSpec = TryMap(inner, ref reason, location);
                return innerSpec is null ? null : new TypeSpec(full, WireKind.Marshalled, null, $"global::XCall.Marshal.NullableValueMarshaller<{innerName}, {innerSpec.Marshaller}>", innerSpec.HasObjects);
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
                string elementPlain = Plain(element);
                if (IsBlockCopied(element))
                {
                    return new TypeSpec(full, WireKind.UnmanagedArray, elementPlain, $"global::XCall.Marshal.UnmanagedArrayMarshaller<{elementPlain}>");
                }
                TypeSpec? elementSpec = TryMap(element, ref reason, location);
                return elementSpec is null ? null : new TypeSpec(full, WireKind.Marshalled, null, $"global::XCall.Marshal.ArrayMarshaller<{elementPlain}, {elementSpec.Marshaller}>", elementSpec.HasObjects);
            }
            if (type is INamedTypeSymbol named)
            {
                string definition = named.OriginalDefinition.ToDisplayString();
                switch (definition)
                {
                    case "System.Collections.Generic.List<T>":
                    case "System.Collections.Generic.HashSet<T>":
                    case "System.Collections.Immutable.ImmutableArray<T>":
                    {
                        ITypeSymbol element = named.TypeArguments[0];
                        string elementPlain = Plain(element);
                        bool blockCopied = IsBlockCopied(element);
                        if (definition == "System.Collections.Generic.List<T>" && blockCopied)
                        {
                            return new TypeSpec(full, WireKind.UnmanagedList, elementPlain, $"global::XCall.Marshal.UnmanagedListMarshaller<{elementPlain}>");
                        }
                        if (definition == "System.Collections.Immutable.ImmutableArray<T>" && blockCopied)
                        {
                            return new TypeSpec(full, WireKind.MarshalledImmutable, elementPlain, $"global::XCall.Marshal.UnmanagedImmutableArrayMarshaller<{elementPlain}>");
                        }
                        TypeSpec? elementSpec = TryMap(element, ref reason, location);
                        string generic = definition switch
                        {
                            "System.Collections.Generic.List<T>" => "ListMarshaller",
                            "System.Collections.Generic.HashSet<T>" => "HashSetMarshaller",
                            _ => "ImmutableArrayMarshaller",
                        };
                        return elementSpec is null ? null : new TypeSpec(full, WireKind.Marshalled, null, $"global::XCall.Marshal.{generic}<{elementPlain}, {elementSpec.Marshaller}>", elementSpec.HasObjects);
                    }
                    case AsyncEnumerableName:
                        return MapStream(named, full, ref reason, location);
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
                        return new TypeSpec(full, WireKind.Marshalled, null, $"global::XCall.Marshal.DictionaryMarshaller<{Plain(key)}, {keySpec.Marshaller}, {Plain(value)}, {valueSpec.Marshaller}>", keySpec.HasObjects || valueSpec.HasObjects);
                    }
                    case "System.ReadOnlyMemory<T>":
                    case "System.ReadOnlySpan<T>":
                    case "System.Span<T>":
                    case "XCall.LentSpan<T>":
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
                            "XCall.LentSpan<T>" => WireKind.Lent,
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

        /// <summary>
        /// An <c>IAsyncEnumerable&lt;T&gt;</c>: a stream whose items travel in batches, unmanaged items as one block
        /// copy per batch (docs/remoting.md, "Streams").
        /// </summary>
        private TypeSpec? MapStream(INamedTypeSymbol stream, string full, ref string? reason, Location? location)
        {
            ITypeSymbol element = stream.TypeArguments[0];
            TypeSpec? elementSpec = TryMap(element, ref reason, location);
            if (elementSpec is null)
            {
                return null;
            }
            if (elementSpec.Kind == WireKind.Stream)
            {
                reason = "a stream of streams is not supported; stream the items, or return a stream per item from a [Remotable] object";
                return null;
            }
            return new TypeSpec(full, WireKind.Stream, elementSpec.FullName, StreamMarshaller(elementSpec), HasObjects: true, Element: elementSpec);
        }

        /// <summary>Unmanaged, and not marshalled by a registered marshaller: one block copy.</summary>
        private bool IsBlockCopied(ITypeSymbol element) =>
            element.IsUnmanagedType && element.TypeKind != Microsoft.CodeAnalysis.TypeKind.TypeParameter && !_registered.ContainsKey(Plain(element));

        private const string RegisterHint = "register a marshaller for it with [assembly: XCallMarshaller(typeof(T), typeof(TMarshaller))], where TMarshaller implements XCall.Marshal.IMarshaller<T>";

        private TypeSpec? MapDataType(INamedTypeSymbol type, string full, ref string? reason, Location? location)
        {
            bool isInterface = type.TypeKind == Microsoft.CodeAnalysis.TypeKind.Interface;
            if (type.TypeKind is not (Microsoft.CodeAnalysis.TypeKind.Class or Microsoft.CodeAnalysis.TypeKind.Struct) && !isInterface)
            {
                reason = "use a class, struct or record with public fields or properties";
                return null;
            }
            if (type.IsStatic)
            {
                reason = "static classes have no instances; pass a concrete data type";
                return null;
            }
            if (type.IsGenericType)
            {
                reason = "generic data types are not supported; declare a non-generic type, or " + RegisterHint;
                return null;
            }
            bool framework = type.SpecialType == SpecialType.System_Object || type.ContainingNamespace?.ToDisplayString() is string ns && (ns == "System" || ns.StartsWith("System.", System.StringComparison.Ordinal));
            if (isInterface && (framework || !HasKnownTypes(type)))
            {
                reason = "interfaces cannot be created from the wire; pass a concrete data type, or list the classes that may travel with [XCallKnownType(typeof(T), id)] on the interface";
                return null;
            }
            if (framework)
            {
                reason = "framework types other than primitives, strings and the supported collections have no generated marshaller; " + RegisterHint;
                return null;
            }
            if (type.IsAbstract && !isInterface && !HasKnownTypes(type))
            {
                reason = "abstract types cannot be created from the wire; pass a concrete data type, or list the concrete classes that may travel with [XCallKnownType(typeof(T), id)] on the abstract class";
                return null;
            }
            if (type.DeclaredAccessibility is Accessibility.Private or Accessibility.Protected)
            {
                reason = "the type must be public or internal";
                return null;
            }
            string plain = Plain(type);
            string marshaller = $"global::XCall.Generated.{Identifier(type)}_XCallMarshaller";
            if (_dataTypes.TryGetValue(plain, out DataTypeSpec? known))
            {
                // Known, or in progress (a recursive type): a struct in progress may hold objects.
                return new TypeSpec(full, WireKind.Data, null, marshaller, known?.HasObjects ?? true);
            }
            _dataTypes[plain] = null;

            EquatableArray<KnownTypeSpec> knownTypes = MapKnownTypes(type, location);
            if (isInterface || type.IsAbstract)
            {
                Add(plain, new DataTypeSpec(plain, marshaller, DataKind.Abstract, 0, default, knownTypes, IsLeaf: false));
                return new TypeSpec(full, WireKind.Data, null, marshaller, HasObjects: true);
            }

            var chain = new List<INamedTypeSymbol>();
            for (INamedTypeSymbol? t = type; t is not null && t.SpecialType != SpecialType.System_Object && t.SpecialType != SpecialType.System_ValueType; t = t.BaseType)
            {
                chain.Insert(0, t);
            }
            var candidates = new List<(string Name, ITypeSymbol Type, bool Settable, bool Assignable, ISymbol Symbol)>();
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
                        candidates.Add((field.Name, field.Type, !field.IsReadOnly, !field.IsReadOnly && !field.IsRequired, field));
                    }
                    else if (member is IPropertySymbol { IsIndexer: false, GetMethod: { DeclaredAccessibility: Accessibility.Public } } property)
                    {
                        bool settable = property.SetMethod is { DeclaredAccessibility: Accessibility.Public };
                        candidates.Add((property.Name, property.Type, settable, settable && !property.SetMethod!.IsInitOnly && !property.IsRequired, property));
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
                    return new TypeSpec(full, WireKind.Data, null, marshaller, HasObjects: true); // reported; keep going so one root cause gives one error
                }
            }

            var members = new List<MemberSpec>();
            bool assignable = true;
            bool onlyFieldInitializers = type.BaseType?.SpecialType == SpecialType.System_Object && type.InstanceConstructors.All(c => c.IsImplicitlyDeclared);
            foreach ((string name, ITypeSymbol memberType, bool settable, bool canAssign, ISymbol symbol) in candidates)
            {
                int index = constructor is null ? -1 : IndexOfParameter(constructor, name);
                if (index < 0 && !settable)
                {
                    continue; // computed or private-set member: not part of the data
                }
                assignable &= index < 0 && canAssign;
                string? memberReason = null;
                TypeSpec? memberSpec = TryMap(memberType, ref memberReason, location);
                if (memberSpec is null)
                {
                    _diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.UnsupportedType, location, $"Member '{name}'", type.ToDisplayString(), memberType.ToDisplayString(), memberReason ?? "unsupported type"));
                    continue;
                }
                bool freshList = onlyFieldInitializers && memberSpec.Kind == WireKind.Marshalled && IsList(memberType) && StartsAsNewEmptyList(symbol);
                members.Add(new MemberSpec(name, memberSpec, index, freshList));
            }
            DataKind kind = type.IsValueType ? DataKind.Struct : constructor is null && assignable ? DataKind.Mutable : DataKind.Immutable;
            bool leaf = members.All(m => !m.Type.HasObjects);
            bool frozen = kind == DataKind.Immutable && IsFrozen(chain);
            Add(plain, new DataTypeSpec(plain, marshaller, kind, constructor?.Parameters.Length ?? 0, new EquatableArray<MemberSpec>(members), knownTypes, leaf, ComparesByValue(chain), frozen));
            return new TypeSpec(full, WireKind.Data, null, marshaller, HasObjects: kind != DataKind.Struct || !leaf);
        }

        private void Add(string plain, DataTypeSpec spec)
        {
            _dataTypes[plain] = spec;
            _dataOrder.Add(plain);
        }

        private static IEnumerable<AttributeData> KnownTypeAttributes(INamedTypeSymbol type) =>
            type.GetAttributes().Where(a => a.AttributeClass?.ToDisplayString() == KnownTypeAttribute);

        private static bool HasKnownTypes(INamedTypeSymbol type) => KnownTypeAttributes(type).Any();

        /// <summary>Reads and checks the [XCallKnownType] list of <paramref name="type"/>; maps every valid known type.</summary>
        private EquatableArray<KnownTypeSpec> MapKnownTypes(INamedTypeSymbol type, Location? location)
        {
            var result = new List<KnownTypeSpec>();
            var ids = new Dictionary<ushort, string>();
            var listed = new HashSet<string>();
            string display = type.ToDisplayString();
            foreach (AttributeData attribute in KnownTypeAttributes(type))
            {
                if (attribute.ConstructorArguments.Length != 2 || attribute.ConstructorArguments[0].Value is not INamedTypeSymbol known || known.TypeKind == Microsoft.CodeAnalysis.TypeKind.Error || attribute.ConstructorArguments[1].Value is not ushort id)
                {
                    continue; // the compiler reports the broken attribute
                }
                Location? at = attribute.ApplicationSyntaxReference?.GetSyntax().GetLocation() ?? location;
                string knownDisplay = known.ToDisplayString();
                if (known.TypeKind != Microsoft.CodeAnalysis.TypeKind.Class || known.IsAbstract || !Derives(known, type))
                {
                    _diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.KnownTypeNotDerived, at, knownDisplay, display));
                    continue;
                }
                if (!listed.Add(knownDisplay))
                {
                    _diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.DuplicateKnownType, at, display, knownDisplay, $"it is listed twice"));
                    continue;
                }
                if (ids.TryGetValue(id, out string? other))
                {
                    _diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.DuplicateKnownType, at, display, knownDisplay, $"id {id} is already given to '{other}'"));
                    continue;
                }
                ids[id] = knownDisplay;
                string? reason = null;
                TypeSpec? spec = TryMap(known, ref reason, at);
                if (spec is not { Kind: WireKind.Data })
                {
                    _diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.UnsupportedType, at, $"Known type '{knownDisplay}'", display, knownDisplay, reason ?? "unsupported type"));
                    continue;
                }
                result.Add(new KnownTypeSpec(id, Plain(known), spec.Marshaller));
            }
            return new EquatableArray<KnownTypeSpec>(result);
        }

        private static bool Derives(INamedTypeSymbol known, INamedTypeSymbol baseType)
        {
            if (baseType.TypeKind == Microsoft.CodeAnalysis.TypeKind.Interface)
            {
                return known.AllInterfaces.Any(i => SymbolEqualityComparer.Default.Equals(i, baseType));
            }
            for (INamedTypeSymbol? t = known.BaseType; t is not null; t = t.BaseType)
            {
                if (SymbolEqualityComparer.Default.Equals(t, baseType))
                {
                    return true;
                }
            }
            return false;
        }

        /// <summary>The valid [assembly: XCallMarshaller] registrations of <paramref name="assembly"/>, by marshalled type.</summary>
        private static Dictionary<string, string> RegisteredMarshallers(IAssemblySymbol assembly)
        {
            var registered = new Dictionary<string, string>();
            foreach ((ITypeSymbol type, INamedTypeSymbol marshaller, _) in Registrations(assembly))
            {
                if (ImplementsMarshaller(marshaller, type))
                {
                    registered[Plain(type)] = marshaller.ToDisplayString(s_fullName);
                }
            }
            return registered;
        }

        /// <summary>XCALL013 for every registration whose marshaller does not implement IMarshaller of its type.</summary>
        public static EquatableArray<DiagnosticInfo> CheckRegistrations(IAssemblySymbol assembly)
        {
            var diagnostics = new List<DiagnosticInfo>();
            foreach ((ITypeSymbol type, INamedTypeSymbol marshaller, AttributeData attribute) in Registrations(assembly))
            {
                if (!ImplementsMarshaller(marshaller, type))
                {
                    diagnostics.Add(DiagnosticInfo.Create(
                        DiagnosticDescriptors.BadRegisteredMarshaller,
                        attribute.ApplicationSyntaxReference?.GetSyntax().GetLocation(),
                        marshaller.ToDisplayString(),
                        type.ToDisplayString()));
                }
            }
            return new EquatableArray<DiagnosticInfo>(diagnostics);
        }

        private static IEnumerable<(ITypeSymbol Type, INamedTypeSymbol Marshaller, AttributeData Attribute)> Registrations(IAssemblySymbol assembly)
        {
            foreach (AttributeData attribute in assembly.GetAttributes())
            {
                if (attribute.AttributeClass?.ToDisplayString() == MarshallerAttribute
                    && attribute.ConstructorArguments.Length == 2
                    && attribute.ConstructorArguments[0].Value is ITypeSymbol { TypeKind: not Microsoft.CodeAnalysis.TypeKind.Error } type
                    && attribute.ConstructorArguments[1].Value is INamedTypeSymbol { TypeKind: not Microsoft.CodeAnalysis.TypeKind.Error } marshaller)
                {
                    yield return (type, marshaller, attribute);
                }
            }
        }

        private static bool ImplementsMarshaller(INamedTypeSymbol marshaller, ITypeSymbol type) =>
            !marshaller.IsUnboundGenericType
            && marshaller.DeclaredAccessibility is Accessibility.Public or Accessibility.Internal
            && marshaller.AllInterfaces.Any(i =>
                i.OriginalDefinition.ToDisplayString() == "XCall.Marshal.IMarshaller<T>"
                && SymbolEqualityComparer.Default.Equals(i.TypeArguments[0].WithNullableAnnotation(NullableAnnotation.NotAnnotated), type.WithNullableAnnotation(NullableAnnotation.NotAnnotated)));

        private static bool IsList(ITypeSymbol type) =>
            type is INamedTypeSymbol { IsGenericType: true } named && named.OriginalDefinition.ToDisplayString() == "System.Collections.Generic.List<T>";

        /// <summary>
        /// Whether the member is initialized with a new empty list of its own type (<c>= [];</c> or
        /// <c>= new();</c> on a field or an auto-property). With no constructor of its own and no base class,
        /// nothing else runs when the object is created, so that list is empty and nobody else holds it.
        /// </summary>
        private static bool StartsAsNewEmptyList(ISymbol member)
        {
            if (member.DeclaringSyntaxReferences.Length != 1)
            {
                return false;
            }
            ExpressionSyntax? initializer = member.DeclaringSyntaxReferences[0].GetSyntax() switch
            {
                VariableDeclaratorSyntax field => field.Initializer?.Value,
                PropertyDeclarationSyntax { AccessorList: { } accessors } property
                    when accessors.Accessors.All(a => a.Body is null && a.ExpressionBody is null) => property.Initializer?.Value,
                _ => null,
            };
            return initializer switch
            {
                CollectionExpressionSyntax collection => collection.Elements.Count == 0,
                ImplicitObjectCreationExpressionSyntax creation => creation.ArgumentList.Arguments.Count == 0 && creation.Initializer is null,
                _ => false,
            };
        }

        /// <summary>
        /// Whether objects of the type (the last of <paramref name="chain"/>, its classes from the first below
        /// object) are equal and hash by their members: a record, or a class that overrides Equals or GetHashCode.
        /// </summary>
        private static bool ComparesByValue(List<INamedTypeSymbol> chain) =>
            chain.Count > 0 && !chain[chain.Count - 1].IsValueType &&
            chain.Any(t => t.IsRecord || t.GetMembers().OfType<IMethodSymbol>().Any(m =>
                m.IsOverride && ((m.Name == "GetHashCode" && m.Parameters.Length == 0) || (m.Name == "Equals" && m.Parameters.Length == 1))));

        /// <summary>
        /// Whether no object of the class (the last of <paramref name="chain"/>) can change once built: every
        /// instance field of every class in the chain, whatever its accessibility, is read-only (the compiler
        /// marks a get-only or init-only auto-property's backing field so; a property whose accessor writes its
        /// <c>field</c> is not) and holds an unmanaged value or a string, and no class has an instance event (its
        /// subscriber list changes; the compiler does not list its field). A domain call may then hand the callee
        /// the caller's object itself. Only classes declared in source, and not partial, qualify: a referenced
        /// assembly shows the compiler its public members only, and another generator may add fields to a
        /// partial class that this one never sees.
        /// </summary>
        private static bool IsFrozen(List<INamedTypeSymbol> chain) =>
            chain.Count > 0 && !chain[chain.Count - 1].IsValueType &&
            chain.All(t => t.DeclaringSyntaxReferences.Length == 1 && !IsPartial(t)) &&
            chain.All(t => !t.GetMembers().OfType<IEventSymbol>().Any(e => !e.IsStatic)) &&
            chain.All(t => t.GetMembers().OfType<IFieldSymbol>().Where(f => !f.IsStatic && !f.IsConst).All(f =>
                f.IsReadOnly && (f.Type.SpecialType == SpecialType.System_String || (f.Type.IsUnmanagedType && f.Type.TypeKind != TypeKind.Pointer))));

        private static bool IsPartial(INamedTypeSymbol type) =>
            type.DeclaringSyntaxReferences.Any(r => r.GetSyntax() is TypeDeclarationSyntax declaration
                && declaration.Modifiers.Any(m => m.ValueText == "partial"));

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
