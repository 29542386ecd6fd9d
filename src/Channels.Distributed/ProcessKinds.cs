using XCall.Marshal;

namespace XCall.Channels.Distributed;

/// <summary>
/// The processes a program ships to workers with <see cref="DistParallel"/>: a base type (an interface or abstract
/// class that lists its concrete processes with <c>[XCallKnownType(typeof(P), id)]</c>) and the marshaller XCall's
/// generator emitted for it (<c>XCall.Generated.Type_XCallMarshaller</c>, once a [Remotable] interface of the
/// program uses the type). A process travels as its known-type id and its fields; the worker, which loaded the
/// same program, reads it back with the same marshaller. No type is created from a name on the wire.
/// </summary>
public abstract class ProcessKinds
{
    private protected ProcessKinds(Type baseType)
    {
        // The program's identity: a worker runs processes only for the build it loaded.
        Program = $"{baseType.Assembly.GetName().Name} {baseType.Module.ModuleVersionId:N}";
    }

    /// <summary>The kinds of <typeparamref name="TProcess"/>, marshalled by <typeparamref name="TMarshaller"/>.</summary>
    public static ProcessKinds Of<TProcess, TMarshaller>() where TProcess : class, IProcess where TMarshaller : IMarshaller<TProcess> =>
        new Kinds<TProcess, TMarshaller>();

    /// <summary>The shipping program's assembly name and build id, which a worker compares with the program it loaded.</summary>
    internal string Program { get; }

    /// <summary>Whether <paramref name="process"/> can travel (it is a process of the base type).</summary>
    internal abstract bool Ships(IProcess process);

    internal abstract byte[] Write(IProcess process);

    /// <exception cref="XCallProtocolException">The bytes are not a process of the base type.</exception>
    internal abstract IProcess Read(byte[] bytes);

    private sealed class Kinds<TProcess, TMarshaller>() : ProcessKinds(typeof(TProcess))
        where TProcess : class, IProcess where TMarshaller : IMarshaller<TProcess>
    {
        private readonly MarshallerCodec<TProcess, TMarshaller> _codec = new();

        internal override bool Ships(IProcess process) => process is TProcess;

        internal override byte[] Write(IProcess process) => _codec.ToBytes((TProcess)process);

        internal override IProcess Read(byte[] bytes) => _codec.FromBytes(bytes)
            ?? throw new XCallProtocolException($"A null {typeof(TProcess).Name} came where a process was expected.");
    }
}
