"""dissect"""
