using XCall;

namespace XCall.Samples.Inventory;

/// <summary>A stock of named items, called from F# (samples/FSharpClient) through the proxy compiled here.</summary>
[Remotable]
public interface IInventory
{
    /// <summary>Adds <paramref name="count"/> of <paramref name="item"/>; returns how many there are now.</summary>
    int Add(string item, int count);

    /// <summary>How many of <paramref name="item"/> there are.</summary>
    Task<int> CountAsync(string item, CancellationToken cancellationToken);

    /// <summary>Every item with its count, by name.</summary>
    Stock[] List();

    /// <summary>Takes <paramref name="count"/> of <paramref name="item"/>; fails when there are fewer.</summary>
    void Take(string item, int count);
}
