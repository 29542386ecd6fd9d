namespace XCall.Cluster;

/// <summary>
/// Names every rank of a world can resolve: a rank registers a name with a value (an address, a rank, any
/// text), the others look it up or wait for it. In a world started by a launcher, names live in rank 0's store
/// for the life of the world. A process started alone keeps its names in this machine's per-user runtime
/// directory instead, so programs started independently on one machine resolve each other's names without a
/// daemon; such a name goes when the process that registered it ends.
/// </summary>
public sealed class NameDirectory
{
    private readonly INameStore _store;

    internal NameDirectory(INameStore store) => _store = store;

    /// <summary>Registers <paramref name="name"/> with <paramref name="value"/>; registering the same value again is allowed.</summary>
    /// <exception cref="InvalidOperationException">The name is registered with another value.</exception>
    /// <exception cref="RankFailedException">Rank 0, which holds the directory, failed.</exception>
    public async Task RegisterAsync(string name, string value, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        ArgumentNullException.ThrowIfNull(value);
        string held = await _store.AddAsync(name, value, cancellationToken).ConfigureAwait(false);
        if (held != value)
        {
            throw new InvalidOperationException($"The name '{name}' is already registered with the value '{held}'.");
        }
    }

    /// <summary>The value of <paramref name="name"/>, or null when it is not registered.</summary>
    /// <exception cref="RankFailedException">Rank 0, which holds the directory, failed.</exception>
    public Task<string?> LookUpAsync(string name, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        return _store.GetAsync(name, cancellationToken);
    }

    /// <summary>The value of <paramref name="name"/> once some rank registered it.</summary>
    /// <exception cref="TimeoutException">The name was not registered within <paramref name="timeout"/>.</exception>
    /// <exception cref="RankFailedException">A rank of the world failed while waiting.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled.</exception>
    public async Task<string> WaitForAsync(string name, TimeSpan timeout, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        using var timer = new CancellationTokenSource(timeout);
        using var linked = CancellationTokenSource.CreateLinkedTokenSource(timer.Token, cancellationToken);
        try
        {
            return await _store.WaitAsync(name, linked.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (timer.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
        {
            throw new TimeoutException($"The name '{name}' was not registered within {timeout}.");
        }
        finally
        {
            // A wait that ended for another reason (a rank failed) must not stay behind in the store.
            await linked.CancelAsync().ConfigureAwait(false);
        }
    }
}
