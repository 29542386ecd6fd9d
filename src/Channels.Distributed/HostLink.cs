using XCall.Runtime;
using XCall.Runtime.CompilerServices;
using XCall.Transport;

namespace XCall.Channels.Distributed;

/// <summary>
/// A remote end's way to the process that hosts its construct: every call of a remote channel end, barrier or
/// bucket goes through it, so a host that is gone surfaces the same way everywhere, as a
/// <see cref="Cluster.RankFailedException"/> naming the rank and the construct; and every call first has the
/// host of each buffered channel this process wrote to confirm the values are in it (<see cref="Unconfirmed"/>).
/// </summary>
internal sealed class HostLink(IConstructHost host, ConstructAddress address, string name)
{
    /// <summary>The host's proxy.</summary>
    public IConstructHost Host => host;

    /// <summary>The construct's id at its host.</summary>
    public int Id => address.Id;

    /// <summary>The construct's name.</summary>
    public string Name => name;

    /// <summary>The exception a call raises when the host is gone.</summary>
    public Cluster.RankFailedException Lost(XCallDisconnectedException e) => RemoteStatus.Lost(address, name, e);

    /// <summary>Calls <paramref name="call"/> with the host, the construct's id and <paramref name="state"/>.</summary>
    public void Call<TState>(TState state, Action<IConstructHost, int, TState> call)
    {
        Unconfirmed.ConfirmAll();
        try
        {
            call(host, address.Id, state);
        }
        catch (XCallDisconnectedException e)
        {
            throw Lost(e);
        }
    }

    /// <summary>Calls <paramref name="call"/> with the host, the construct's id and <paramref name="state"/>; returns its result.</summary>
    public TResult Call<TState, TResult>(TState state, Func<IConstructHost, int, TState, TResult> call)
    {
        Unconfirmed.ConfirmAll();
        try
        {
            return call(host, address.Id, state);
        }
        catch (XCallDisconnectedException e)
        {
            throw Lost(e);
        }
    }

    /// <summary>
    /// Calls the async method <paramref name="call"/> (with the host, the construct's id and <paramref name="state"/>) and
    /// waits for its result on this thread, reading the host's connection meanwhile when nobody else does
    /// (<see cref="XCallConnection.WaitReceiving(IReplyWait, TimeSpan)"/>): the reply completes the call here, as a
    /// synchronous call's would, instead of on the connection's receive thread and then the pool.
    /// </summary>
    public TResult CallAndWait<TState, TResult>(TState state, Func<IConstructHost, int, TState, ValueTask<TResult>> call)
    {
        Unconfirmed.ConfirmAll();
        try
        {
            ValueTask<TResult> pending = call(host, address.Id, state);
            if (pending.IsCompleted)
            {
                return pending.GetAwaiter().GetResult();
            }
            if (host is ProxyBase { Connection: { IsClosed: false } connection } && !ReferenceEquals(XCallConnection.Current, connection))
            {
                return ValueTaskWait<TResult>.WaitReceiving(pending, connection);
            }
            return pending.AsTask().GetAwaiter().GetResult();
        }
        catch (XCallDisconnectedException e)
        {
            throw Lost(e);
        }
    }

    /// <summary>Awaits <paramref name="call"/>, made with the host and the construct's id.</summary>
    public async Task CallAsync(Func<IConstructHost, int, Task> call)
    {
        await Unconfirmed.ConfirmAllAsync().ConfigureAwait(false);
        try
        {
            await call(host, address.Id).ConfigureAwait(false);
        }
        catch (XCallDisconnectedException e)
        {
            throw Lost(e);
        }
    }

    /// <summary>Awaits <paramref name="call"/>, made with the host, the construct's id and <paramref name="state"/>; returns its result.</summary>
    public async ValueTask<TResult> CallAsync<TState, TResult>(TState state, Func<IConstructHost, int, TState, ValueTask<TResult>> call)
    {
        await Unconfirmed.ConfirmAllAsync().ConfigureAwait(false);
        try
        {
            return await call(host, address.Id, state).ConfigureAwait(false);
        }
        catch (XCallDisconnectedException e)
        {
            throw Lost(e);
        }
    }
}
