namespace XCall.Samples.Inventory;

/// <summary>One line of an inventory: a data class the generator marshals field by field.</summary>
public sealed class Stock
{
    /// <summary>The item's name.</summary>
    public string Name { get; set; } = "";

    /// <summary>How many there are.</summary>
    public int Count { get; set; }
}
