namespace XCall.Cluster;

/// <summary>Names in rank 0's store, under the prefix <c>name/</c>; a rank's failure fails the calls (see <see cref="ClusterWorld"/>).</summary>
internal sealed class WorldNameStore(ClusterWorld world) : INameStore
{
    private const string Prefix = "name/";

    public Task<string> AddAsync(string name, string value, CancellationToken cancellationToken) =>
        world.CallStoreAsync(store => store.AddAsync(Prefix + name, value), cancellationToken);

    public Task<string?> GetAsync(string name, CancellationToken cancellationToken) =>
        world.CallStoreAsync(store => store.GetAsync(Prefix + name), cancellationToken);

    public Task<string> WaitAsync(string name, CancellationToken cancellationToken) =>
        world.CallStoreAsync(store => store.WaitAsync(Prefix + name, cancellationToken), cancellationToken);
}
