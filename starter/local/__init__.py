"""starter/local"""
