namespace XCall.Cluster;

/// <summary>Where a <see cref="NameDirectory"/> keeps its names: rank 0's store, or this machine's runtime directory.</summary>
internal interface INameStore
{
    /// <summary>Sets <paramref name="name"/> unless it holds another value; returns the value it holds afterwards.</summary>
    Task<string> AddAsync(string name, string value, CancellationToken cancellationToken);

    /// <summary>The value of <paramref name="name"/>, or null.</summary>
    Task<string?> GetAsync(string name, CancellationToken cancellationToken);

    /// <summary>The value of <paramref name="name"/> once it is set.</summary>
    Task<string> WaitAsync(string name, CancellationToken cancellationToken);
}
