"""What a translation leaves dynamic: dims of tensor inputs (`shapes`) and Python numbers
(`numbers`) that change between calls, so a function translates a bounded number of times."""
