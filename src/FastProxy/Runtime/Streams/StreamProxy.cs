using XCall.Domain;
using XCall.Runtime.CompilerServices;

namespace XCall.Runtime;

/// <summary>The consumer's hold on a stream the peer produces: a reference proxy (released when the consumer is
/// done), whose calls are the stream's requests (see <see cref="StreamDispatcher{T, TItems}"/>).</summary>
internal sealed class StreamProxy<T, TItems>(XCallConnection connection, ulong objectId)
    : ProxyBase(connection, objectId, StreamDispatcher<T, TItems>.Instance) where TItems : IStreamItems<T>
{
    /// <summary>Begins a request on the stream: null when the link is down (a reconnecting channel between links).</summary>
    public PendingCall? Begin(uint methodId) => BeginAsyncCall(methodId);
}

/// <summary>Makes the proxies of streams the peer sends (<see cref="ReferenceTable.Import{T}"/> finds it in the
/// <see cref="ContractRegistry"/>, as it finds a generated contract).</summary>
internal sealed class StreamContract<T, TItems> : Contract<StreamProxy<T, TItems>> where TItems : IStreamItems<T>
{
    public override string Name => StreamDispatcher<T, TItems>.Instance.ContractName;

    public override ulong Hash => StreamDispatcher<T, TItems>.Hash;

    public override Dispatcher Dispatcher => StreamDispatcher<T, TItems>.Instance;

    public override StreamProxy<T, TItems> CreateProxy(XCallConnection connection, ulong objectId) => new(connection, objectId);

    public override StreamProxy<T, TItems> CreateDomainProxy(DomainLink link) =>
        throw new NotSupportedException("A stream crosses a load context as a wrapped enumerable, not as a proxy.");
}
